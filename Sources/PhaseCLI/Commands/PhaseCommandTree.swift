import Cutover
import CutoverPostgres
/// Every option, flag and command of `phase`, declared once for parsing and help.
public enum PhaseCommandTree {
    // MARK: Global options

    /// `--database-url`
    public static let databaseURL = Option(
        "database-url", type: .string, valueName: "url", environmentVariable: "DATABASE_URL",
        help: "The PostgreSQL database to work on, as a URI or a keyword/value string; without it, libpq's PG* variables and ~/.pgpass apply.")
    /// `--plan`
    public static let plan = Option(
        "plan", type: .string, valueName: "dir",
        help: "The folder holding plan.json and the SQL of each step; the built-in drafts plan when omitted.")
    /// `--format`
    public static let format = StandardParameters.format
    /// `--quiet`
    public static let quiet = StandardParameters.quiet

    // MARK: Step options

    /// `--dry-run`
    public static let dryRun = StandardParameters.dryRun
    /// `--lock-timeout`
    public static let lockTimeout = Option(
        "lock-timeout", type: .duration(in: .milliseconds(10) ... .seconds(60)), default: .milliseconds(500),
        valueName: "duration", help: "How long one statement may wait for a lock; others never queue behind it for longer.")
    /// `--statement-timeout`
    public static let statementTimeout = Option(
        "statement-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(600),
        valueName: "duration", help: "How long one statement may run.")
    /// `--max-retries`
    public static let maxRetries = Option(
        "max-retries", type: .integer(in: 0...1000), default: 30,
        valueName: "count", help: "How many times a statement that could not get its lock is tried again.")
    /// `--max-backoff`
    public static let maxBackoff = Option(
        "max-backoff", type: .duration(in: .milliseconds(10) ... .seconds(300)), default: .seconds(5),
        valueName: "duration", help: "The longest wait between retries; waits double from 100ms, with jitter.")
    /// `--epoch`
    public static let epoch = Option(
        "epoch", type: .integer(atLeast: 0), valueName: "n",
        help: "The epoch 'phase status' showed: refuse if the plan has moved since, unless this very step is what moved it.")
    /// `--reconnect-for`
    public static let reconnectFor = Option(
        "reconnect-for", type: .duration(in: .zero ... .seconds(3600)), default: .seconds(60), valueName: "duration",
        help: "How long a step whose connection is lost (a failover, a restart) goes on reconnecting, to the primary a multi-host URL with target_session_attrs=read-write finds, and finishes; 0s disables.")
    /// `rollback`'s step.
    public static let rollbackStep = Argument(
        "step", type: .choice(RollbackTarget.self),
        help: "What to undo: switch (back to the legacy writer), expand (what expand added, or what a stopped expand left) or contract (what a contract stopped before its last file applied). Named, so that running it again never undoes one step more.")
    /// `switch`'s path.
    public static let path = Argument("path", type: .choice(["legacy", "modern"]),
                                      help: "The writer path later operations take.")
    /// `--force-readers`
    public static let forceReaders = Flag(
        "force-readers",
        help: "Switch to modern without reader registry data showing that every live reader reads v2; the history records it.")
    /// `switch --wait-for-fleet`
    public static let waitForFleet = Flag(
        "wait-for-fleet",
        help: "After the switch commits, wait until every live registered instance reports that it follows the new epoch, with progress on stderr; exits 4 when --fleet-timeout passes first (the switch stays committed).")
    /// `switch --fleet-timeout`
    public static let fleetTimeout = Option(
        "fleet-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(150), valueName: "duration",
        help: "How long --wait-for-fleet waits; the default outlasts the 120s after which a silent instance counts as gone.")
    /// `--batch-size`
    public static let batchSize = Option("batch-size", type: .integer(in: 1...100_000), valueName: "rows",
                                         help: "Rows per transaction; the plan's batch size (1000 for drafts) when omitted.")
    /// `--batch-delay`
    public static let batchDelay = Option("batch-delay", type: .duration(in: .zero ... .seconds(60)), default: .zero,
                                          valueName: "duration", help: "A pause after each batch, to leave room for the live load.")
    /// `--nice-ratio`
    public static let niceRatio = Option(
        "nice-ratio", type: .decimal(in: PlanLimits.niceRatio), valueName: "ratio",
        help: "A pause after each batch as a share of the batch's own time (1: as long as the batch took); the plan's nice ratio (0.25 for drafts) when omitted.")
    /// `--window`
    public static let window = Option("window", type: .duration(in: .zero ... .seconds(365 * 86_400)), valueName: "duration",
                                      help: "How long the modern writer must have written alone; the plan's window when omitted.")
    /// `--yes`
    public static let yes = Flag("yes", help: "Confirm that contract cannot be undone.")
    /// `check`'s step.
    public static let step = Argument("step", type: .choice(["expand", "switch", "switch-legacy", "backfill", "contract", "rollback"]),
                                      isOptional: true, help: "The step whose checks to run; the next step when omitted.")
    /// `--limit`
    public static let limit = Option("limit", type: .integer(in: 1...10_000), default: 50,
                                     valueName: "count", help: "How many attempts to show, the most recent.")
    /// `--older-than`
    public static let olderThan = Option("older-than", type: .duration(in: LedgerPruner.minimumRetention ... LedgerPruner.maximumRetention),
                                         default: .seconds(7 * 86_400),
                                         valueName: "duration", help: "Prune ledger rows older than this; never less than a day.")
    /// `ledger prune --batch-size`
    public static let pruneBatchSize = Option("batch-size", type: .integer(in: 1...100_000), default: 1000,
                                              help: "Ledger rows deleted per transaction.")

    /// `--reader-timeout`
    public static let readerTimeout = Option(
        "reader-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(120),
        valueName: "duration", help: "How long a registered reader stays live after its last heartbeat.")
    /// `observe --window`
    public static let observeWindow = Option(
        "window", type: .duration(in: .seconds(60) ... .seconds(86_400)), default: .seconds(300), valueName: "duration",
        help: "The span of recent outcomes judged (whole minutes, as the outcome log counts them).")
    /// `--max-error-rate`
    public static let maxErrorRate = Option(
        "max-error-rate", type: .percentage, default: 0.01, valueName: "percent",
        help: "The modern path's highest acceptable share of failed saves.")
    /// `--max-conflict-ratio`
    public static let maxConflictRatio = Option(
        "max-conflict-ratio", type: .ratio, default: 2, valueName: "ratio",
        help: "The modern path's highest acceptable conflict rate, as a multiple of the legacy path's before the switch.")
    /// `--min-saves`
    public static let minSaves = Option(
        "min-saves", type: .integer(in: 1...1_000_000), default: 20, valueName: "count",
        help: "Fewer modern saves than this in the window are too few to judge.")
    /// `--auto-rollback`
    public static let autoRollback = Flag(
        "auto-rollback", help: "Switch back to legacy, once, when a threshold is crossed and the rollback is still safe.")
    /// `--follow`
    public static let follow = Flag("follow", help: "Keep observing until a threshold is crossed or the command is interrupted.")
    /// `--interval`
    public static let interval = Option(
        "interval", type: .duration(in: .seconds(1) ... .seconds(3600)), default: .seconds(15), valueName: "duration",
        help: "How often --follow looks again.")
    /// `compare --sample`
    public static let sample = Option("sample", type: .integer(in: 1...1_000_000), default: 1000, valueName: "count",
                                      help: "How many drafts to read and compare.")
    /// `--show-values`
    public static let showValues = Flag("show-values", help: "Print the values that differ; hidden by default.")

    /// `demo --rows`
    public static let rows = Option("rows", type: .integer(in: 10...10_000_000), default: 2000, valueName: "count",
                                    help: "How many drafts to seed the legacy table with.")
    /// `demo --duration`
    public static let duration = Option("duration", type: .duration(in: .seconds(6) ... .seconds(3600)), default: .seconds(18),
                                        valueName: "duration", help: "How long the simulated fleet writes, spread over the phases.")

    /// `soak --duration`
    public static let soakDuration = Option("duration", type: .duration(in: .seconds(5) ... .seconds(86_400)), default: .seconds(30),
                                            valueName: "duration", help: "How long to save under faults.")

    /// `demo --application-url`, `soak --application-url`
    public static let applicationURL = Option(
        "application-url", type: .string, valueName: "url",
        help: "Where the application instances connect instead of the database itself: a pooler in front of the same server (PgBouncer in transaction mode, say), as a postgresql:// URL whose database name is replaced by the throw-away one. The runner, the checks and LISTEN stay direct.")
    /// `soak --neighbour`
    public static let neighbour = Option(
        "neighbour", type: .choice(SoakNeighbour.self), valueName: "kind", isRepeatable: true,
        help: "A hostile neighbour to run beside the fleet, repeatable: forge-notify sends forged and garbage notifications on the fleet's channel at random moments; squat is a role with the application's grants that holds the old runner lock and tries to take or forge the runner's lease, the writer path, the history, the outcome counts, the ledger and other instances' registrations.")

    /// `--standby`
    public static let standby = Option(
        "standby", type: .string, valueName: "url", isRepeatable: true,
        help: "A standby of the database to inspect, repeatable: its sessions count for contract's checks and its lag and settings are shown; CUTOVER_STANDBY_URLS lists URIs separated by spaces when none is given.")
    /// `--allow-uninspected-standby`
    public static let allowUninspectedStandby = Option(
        "allow-uninspected-standby", type: .string, valueName: "name", isRepeatable: true,
        help: "A standby the primary reports, by application name or address, that contract may run beside without inspecting its sessions, repeatable.")
    /// `--max-replica-lag`
    public static let maxReplicaLag = Option(
        "max-replica-lag", type: .duration(in: .zero ... .seconds(3600)), valueName: "duration",
        help: "Wait before a batch while a standby's replay lag is over this; the plan's ceiling (10s for drafts) when omitted.")
    /// The options that name standbys.
    static let standbyOptions: [any CommandParameter] = [standby, allowUninspectedStandby]

    static let stepOptions: [any CommandParameter] = [epoch, lockTimeout, statementTimeout, maxRetries, maxBackoff, reconnectFor, dryRun]

    /// The whole tree.
    public static let root = CommandSpec(
        "phase",
        abstract: "Move one feature's stored data from a legacy format to a modern one while the application keeps running.",
        discussion: """
            Steps run in order: init, expand, switch modern, backfill, contract. Each is checked before it runs \
            and recorded in the history; every step before contract can be rolled back. A step asked for again \
            after it happened reports it done and changes nothing.

            Exit codes: 0 done, 1 error, 3 refused by checks, 64 usage (the command line or the \
            connection string), 69 database unreachable, 75 another runner holds the lock, 77 the \
            database refused to let the role in (password, role, database, pg_hba.conf), 129, 130 \
            and 143 stopped by SIGHUP, SIGINT and SIGTERM, with one line saying how to go on.
            """,
        parameters: [databaseURL, plan, format, quiet],
        subcommands: [
            CommandSpec("init", abstract: "Install or upgrade the control schema and start tracking the plan.",
                        parameters: [dryRun]),
            CommandSpec("status", abstract: "Show the phase, the writer path, the epoch, each step and the next step's checks.",
                        parameters: standbyOptions),
            CommandSpec("plan", abstract: "Show the plan's steps, their SQL and the locks they take; changes nothing."),
            CommandSpec("check", abstract: "Run a step's checks without running the step; changes nothing.",
                        parameters: [step] + standbyOptions),
            CommandSpec("expand", abstract: "Add the modern representation next to the legacy one.",
                        discussion: "Old application versions keep working; their writes are mirrored into the modern representation.",
                        parameters: stepOptions),
            CommandSpec("switch", abstract: "Change the writer path of every application instance.",
                        discussion: "Commits the new path and epoch and notifies every listening instance in the same transaction. Operations in flight keep their path. With --wait-for-fleet it then waits until every live registered instance reports following the new epoch; run again after it happened, it changes nothing and waits again.",
                        parameters: [path, forceReaders, readerTimeout, waitForFleet, fleetTimeout] + stepOptions),
            CommandSpec("backfill", abstract: "Convert the rows that only have the legacy representation.",
                        discussion: "Works in keyset batches, each its own short transaction, and resumes from its stored cursor when run again.",
                        parameters: [batchSize, niceRatio, batchDelay, maxReplicaLag] + stepOptions),
            CommandSpec("contract", abstract: "Remove the legacy representation. This cannot be undone.",
                        discussion: "Refused unless every check passes: backfill complete, the modern writer alone for the window, no legacy session connected to the primary or an inspected standby, every standby the primary reports inspected, no live reader that reads only v1, and no legacy write within the window.",
                        parameters: [window, yes, readerTimeout] + standbyOptions + stepOptions),
            CommandSpec("rollback", abstract: "Undo the step you name: the switch, expand, or a contract stopped half way.",
                        discussion: "Run again after it happened (a lost reply, a second operator), it reports the rollback done and changes nothing. Once contract has run its last file, nothing can be rolled back.",
                        parameters: [rollbackStep] + stepOptions),
            CommandSpec("history", abstract: "List the steps attempted, refused, failed and interrupted ones included.",
                        parameters: [limit]),
            CommandSpec("readers", abstract: "List the registered application instances and the formats their readers understand.",
                        parameters: [readerTimeout] + standbyOptions),
            CommandSpec("observe", abstract: "Judge the modern path's outcome rates against rollback thresholds.",
                        discussion: "Reads per-path outcome counts from the outcome log. Exits 3 when a threshold is crossed, unless --auto-rollback switched back to legacy.",
                        parameters: [observeWindow, maxErrorRate, maxConflictRatio, minSaves, autoRollback, follow, interval]),
            CommandSpec("compare", abstract: "Read a sample of drafts through both readers and report where they disagree; changes nothing.",
                        parameters: [sample, showValues]),
            CommandSpec("demo", abstract: "Run a whole migration under a simulated fleet, on a throw-away database, and verify it.",
                        discussion: "Starts an ephemeral PostgreSQL cluster (or, with --database-url, a scratch database it creates and drops), seeds drafts, runs old application versions with plain SQL and current instances with the router and the store, walks expand, switch, backfill, a rollback drill and contract, and checks that nothing was lost or done twice. Exits 0 only if every invariant holds.",
                        parameters: [rows, duration, applicationURL]),
            CommandSpec("soak", abstract: "Save under injected faults across writer switches and a backfill, then check nothing was lost or done twice.",
                        discussion: "Terminates backends, loses replies to COMMIT through a loopback proxy, and restarts the server with an immediate shutdown when the cluster is its own, while three instances save and retry unknown outcomes with the same operation ID. Exits non-zero on any violation, a failed save and an instance that did not follow a switch included.",
                        parameters: [rows, soakDuration, applicationURL, neighbour]),
            CommandSpec("ledger", abstract: "Look after the operation ledger.", subcommands: [
                CommandSpec("prune", abstract: "Delete ledger rows older than the retention, in batches.",
                            discussion: "After a row is pruned its operation ID is new again: keep the retention longer than any client retries.",
                            parameters: [olderThan, pruneBatchSize, dryRun]),
            ]),
        ])

    /// The program over the tree.
    public static let program = CommandLineProgram(root: root)
}
