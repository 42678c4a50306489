// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Cutover",
    products: [
        .library(name: "Cutover", targets: ["Cutover"]),
        .library(name: "PostgresClient", targets: ["PostgresClient"]),
        .library(name: "CutoverPostgres", targets: ["CutoverPostgres"]),
        .executable(name: "phase", targets: ["phase"]),
        .executable(name: "cutover-bench", targets: ["CutoverBench"]),
    ],
    targets: [
        // libpq, found through pkg-config.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Linux's epoll, which Swift's Glibc module leaves out.
        .systemLibrary(name: "CEpoll"),
        // Swift over libpq: connections, queries, rows, errors, transactions, pool, notifications.
        // What a Swift server links: nothing in it starts servers or breaks connections.
        .target(name: "PostgresClient", dependencies: ["CLibPQ", "CEpoll"]),
        // A throw-away PostgreSQL cluster in a temporary folder (and its standbys), the account
        // server programs run as, one way to spawn and reap a child process, loopback ports.
        // For `phase demo`, `phase soak`, the benchmark and the tests: no product, and its API
        // is `package`, so no application sees it.
        .target(name: "EphemeralPostgres", dependencies: ["PostgresClient"]),
        // Fault injection: a proxy that loses replies, peers that refuse or never answer, a
        // backend terminator. For `phase soak` and the tests; no product, `package` API.
        .target(name: "PostgresFaults", dependencies: ["PostgresClient", "EphemeralPostgres"]),
        // The pure core: contract, errors, router, codecs, phase state machine. No I/O.
        .target(name: "Cutover"),
        // Over PostgreSQL: the durable store, the ledger and outcome log, the control schema,
        // the phase runner and backfill, the reader registry and the fleet writer path.
        .target(name: "CutoverPostgres", dependencies: ["Cutover", "PostgresClient"], plugins: ["EmbedSQL"]),
        // Compiles sql/ into CutoverPostgres, so that binaries need no files beside them.
        .executableTarget(name: "EmbedSQLTool"),
        .plugin(name: "EmbedSQL", capability: .buildTool(), dependencies: ["EmbedSQLTool"]),

        // Declarative command lines: commands, options and arguments declared once, parsed into
        // typed values, with help and usage errors written from the same declarations.
        .target(name: "CommandLineKit"),
        // The phase command line: its commands, exit codes and output; `demo` runs on an
        // ephemeral cluster and `soak` injects faults, hence the last two.
        .target(name: "PhaseCLI", dependencies: ["CommandLineKit", "Cutover", "CutoverPostgres", "PostgresClient",
                                                 "EphemeralPostgres", "PostgresFaults"]),
        // The operator's tool: a few lines over PhaseCLI.
        .executableTarget(name: "phase", dependencies: ["PhaseCLI"]),
        // The benchmark: saves, backfill and fleet switch, each beside its pgbench baseline.
        // A development executable for docs/BENCHMARKS.md, not an operator's tool.
        .executableTarget(name: "CutoverBench", dependencies: ["CommandLineKit", "Cutover", "CutoverPostgres", "PhaseCLI", "PostgresClient",
                                                               "EphemeralPostgres"]),
        // Shared by the test targets: the PostgreSQL test database harness (an ephemeral
        // cluster, PgBouncer, pg_auto_failover) and the contract suite every DraftWriting must pass.
        .target(name: "CutoverTestSupport", dependencies: ["Cutover", "PostgresClient", "EphemeralPostgres", "PostgresFaults"]),

        .testTarget(name: "CutoverTests", dependencies: ["Cutover", "CutoverTestSupport"], resources: [.copy("Fixtures")]),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "EphemeralPostgres", "PostgresFaults",
                                                               "CutoverTestSupport"]),
        .testTarget(name: "EphemeralPostgresTests", dependencies: ["EphemeralPostgres", "PostgresClient", "CutoverTestSupport"]),
        .testTarget(name: "PostgresFaultsTests", dependencies: ["PostgresFaults", "PostgresClient", "CutoverTestSupport"]),
        .testTarget(name: "CutoverPostgresTests", dependencies: ["CutoverPostgres", "EphemeralPostgres", "PostgresFaults",
                                                                "CutoverTestSupport"]),
        .testTarget(name: "PhaseCLITests", dependencies: ["PhaseCLI", "CommandLineKit", "CutoverBench", "EphemeralPostgres", "PostgresFaults",
                                                          "CutoverTestSupport"],
                    resources: [.copy("Golden")]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
    ]
}
