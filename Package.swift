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
        .target(name: "PostgresClient", dependencies: ["CLibPQ", "CEpoll"]),
        // The pure core: contract, errors, router, codecs, phase state machine. No I/O.
        .target(name: "Cutover"),
        // The durable store, the control schema and the phase runner, over PostgreSQL.
        .target(name: "CutoverPostgres", dependencies: ["Cutover", "PostgresClient"], plugins: ["EmbedSQL"]),
        // Compiles sql/ into CutoverPostgres, so that binaries need no files beside them.
        .executableTarget(name: "EmbedSQLTool"),
        .plugin(name: "EmbedSQL", capability: .buildTool(), dependencies: ["EmbedSQLTool"]),

        // Declarative command lines: commands, options and arguments declared once, parsed into
        // typed values, with help and usage errors written from the same declarations.
        .target(name: "CommandLineKit"),
        // The phase command line: its commands, exit codes and output.
        .target(name: "PhaseCLI", dependencies: ["CommandLineKit", "Cutover", "CutoverPostgres", "PostgresClient"]),
        // The operator's tool: a few lines over PhaseCLI.
        .executableTarget(name: "phase", dependencies: ["PhaseCLI"]),
        // The benchmark: saves, backfill and fleet switch, each beside its pgbench baseline.
        .executableTarget(name: "CutoverBench", dependencies: ["CommandLineKit", "Cutover", "CutoverPostgres", "PostgresClient"]),
        // Shared by the test targets: the PostgreSQL test database harness and the
        // contract suite every DraftWriting must pass.
        .target(name: "CutoverTestSupport", dependencies: ["Cutover", "PostgresClient"]),

        .testTarget(name: "CutoverTests", dependencies: ["Cutover", "CutoverTestSupport"], resources: [.copy("Fixtures")]),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "CutoverTestSupport"]),
        .testTarget(name: "CutoverPostgresTests", dependencies: ["CutoverPostgres", "CutoverTestSupport"]),
        .testTarget(name: "PhaseCLITests", dependencies: ["PhaseCLI", "CommandLineKit", "CutoverTestSupport"], resources: [.copy("Golden")]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
    ]
}
