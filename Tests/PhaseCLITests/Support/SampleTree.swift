import CommandLineKit
import PhaseCLI

/// The writer paths of the sample tree's `switch`.
enum SamplePath: String, CaseIterable, Sendable {
    case legacy, modern
}

/// A purpose-built tree for the parser's and the help writer's rules: global options, a
/// nested group, short names, repeatable and exclusive options, optional and typed arguments.
/// It is not `phase`'s tree (that is ``PhaseCommandTree``, whose help the golden files hold).
enum SampleTree {
    static let databaseURL = Option(
        "database-url", type: .string, valueName: "url", environmentVariable: "DATABASE_URL",
        help: "The PostgreSQL database to work on, as a URI or a keyword/value string; libpq's PG* variables and ~/.pgpass apply too.")
    static let plan = Option("plan", type: .string, default: "sql/drafts", valueName: "dir",
                             help: "The folder holding plan.json and the SQL of each step.")
    static let format = StandardParameters.format
    static let quiet = StandardParameters.quiet
    static let verbose = Flag("verbose", short: "v", help: "Also print each SQL statement as it runs.")
    static let dryRun = StandardParameters.dryRun

    static let step = Argument(optional: "step", type: .string,
                               help: "The step whose checks to run; the next step of the plan when omitted.")
    static let only = Option("only", type: .string, valueName: "check", isRepeatable: true,
                             help: "Run only this check; repeat the option for more.")
    static let lockTimeout = Option("lock-timeout", type: .duration(in: .milliseconds(10) ... .seconds(60)),
                                    default: .seconds(2), help: "How long one DDL statement may wait for its lock.")
    static let retries = Option("retries", type: .integer(in: 0...100), default: 5,
                                help: "How many times a DDL statement that timed out is tried again.")
    static let path = Argument("path", type: .choice(SamplePath.self), help: "The writer path new operations take.")
    static let batchSize = Option("batch-size", short: "b", type: .integer(in: 1...100_000), default: 1000,
                                  help: "Rows converted, or pruned, in one transaction.")
    static let pause = Option("pause", type: .duration, default: .zero, help: "How long to wait between batches.")
    static let window = Option("window", type: .duration(atLeast: .seconds(3_600)), default: .seconds(7 * 86_400),
                               help: "How long the modern writer must have been the only writer.")
    static let yes = Flag("yes", short: "y", help: "Confirm that contract cannot be undone.")
    static let limit = Option("limit", type: .integer(atLeast: 1), default: 20, help: "How many entries to show, newest first.")
    static let staleAfter = Option("stale-after", type: .duration, default: .seconds(300),
                                   help: "A reader not seen for this long no longer counts as live.")
    static let follow = Flag("follow", short: "f", help: "Keep observing until interrupted.")
    static let duration = Option("duration", type: .duration(atLeast: .seconds(1)), default: .seconds(60),
                                 help: "How long to observe.")
    static let olderThan = Option("older-than", type: .duration(atLeast: .seconds(86_400)), default: .seconds(7 * 86_400),
                                  help: "Prune rows older than this; never less than a day.")
    static let keep = Flag("keep", help: "Keep the throw-away cluster and print how to connect to it.")

    static let root = CommandSpec(
        "phase",
        abstract: "Move one feature's stored data from a legacy format to a modern one while the application keeps running.",
        discussion: """
            Each step of the migration is checked before it runs, recorded in the history, and can be \
            rolled back until contract.

            Exit codes: 0 done, 1 error, 3 refused by checks, 64 usage, 69 database unreachable, \
            75 another runner holds the lock.
            """,
        parameters: [databaseURL, plan, format, quiet, verbose],
        mutuallyExclusive: [[quiet, verbose]],
        subcommands: [
            CommandSpec("init", abstract: "Install or upgrade the control schema.", parameters: [dryRun]),
            CommandSpec("status", abstract: "Show the phase, the epoch and the writer path."),
            CommandSpec("plan", abstract: "Show the steps of the plan and their checksums."),
            CommandSpec("check", abstract: "Run the checks of a step without running the step.",
                        parameters: [step, only]),
            CommandSpec("expand", abstract: "Add the modern representation next to the legacy one.",
                        discussion: "Legacy writers keep working; their writes are mirrored into the modern representation.",
                        parameters: [lockTimeout, retries, dryRun]),
            CommandSpec("switch", abstract: "Change the writer path of every application instance.",
                        parameters: [path, dryRun]),
            CommandSpec("backfill", abstract: "Convert rows that only have the legacy representation.",
                        discussion: "Works in keyset batches and resumes from its stored cursor when run again.",
                        parameters: [batchSize, pause, dryRun]),
            CommandSpec("contract", abstract: "Remove the legacy representation. This cannot be undone.",
                        parameters: [window, yes, dryRun]),
            CommandSpec("rollback", abstract: "Undo the last step, when its checks allow.", parameters: [dryRun]),
            CommandSpec("history", abstract: "List the steps run, failed and rolled-back ones included.",
                        parameters: [limit]),
            CommandSpec("readers", abstract: "List the readers that registered and the format each reads.",
                        parameters: [staleAfter]),
            CommandSpec("observe", abstract: "Watch legacy writes and outcome rates against the thresholds.",
                        parameters: [follow, duration], mutuallyExclusive: [[follow, duration]]),
            CommandSpec("ledger", abstract: "Look after the operation ledger.", subcommands: [
                CommandSpec("prune", abstract: "Delete ledger rows older than the retention period, in batches.",
                            parameters: [olderThan, batchSize, dryRun]),
            ]),
            CommandSpec("demo", abstract: "Run a whole migration against a throw-away PostgreSQL cluster.",
                        parameters: [keep]),
        ])

    static let program = CommandLineProgram(root: root)
}
