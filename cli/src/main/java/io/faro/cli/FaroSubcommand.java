package io.faro.cli;

/**
 * A {@code bin/faro} subcommand contributed by a module above cli (bench, later admin), found with
 * {@link java.util.ServiceLoader}: such modules depend on cli (for the local cluster), so cli
 * cannot name them. The implementation is a picocli {@code @Command} class with a public
 * no-argument constructor, listed in {@code META-INF/services/io.faro.cli.FaroSubcommand}.
 */
public interface FaroSubcommand {}
