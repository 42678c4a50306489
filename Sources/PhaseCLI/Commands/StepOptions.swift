import CommandLineKit
import CutoverPostgres

/// The options of every command that changes the migration (expand, switch, backfill,
/// contract, rollback), declared once, and their values.
struct StepOptions: Sendable {
    /// `--epoch`
    static let epoch = Option(
        "epoch", type: .integer(atLeast: 0), valueName: "n",
        help: "The epoch 'phase status' showed: refuse if the plan has moved since, unless this very step is what moved it.")
    /// `--lock-timeout`
    static let lockTimeout = Option(
        "lock-timeout", type: .duration(in: .milliseconds(10) ... .seconds(60)), default: .milliseconds(500),
        valueName: "duration", help: "How long one statement may wait for a lock; others never queue behind it for longer.")
    /// `--statement-timeout`
    static let statementTimeout = Option(
        "statement-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(600),
        valueName: "duration", help: "How long one statement may run.")
    /// `--check-timeout`, also for `status` and `check`.
    static let checkTimeout = Option(
        "check-timeout", type: .duration(in: .seconds(1) ... .seconds(86_400)), default: .seconds(30),
        valueName: "duration",
        help: "How long one check may run; a check that reads a large table (rows still to convert, contract's) may need longer.")
    /// `--max-retries`
    static let maxRetries = Option(
        "max-retries", type: .integer(in: 0...1000), default: 30,
        valueName: "count", help: "How many times a statement that could not get its lock is tried again.")
    /// `--max-backoff`
    static let maxBackoff = Option(
        "max-backoff", type: .duration(in: .milliseconds(10) ... .seconds(300)), default: .seconds(5),
        valueName: "duration", help: "The longest wait between retries; waits double from 100ms, with jitter.")
    /// `--reconnect-for`
    static let reconnectFor = Option(
        "reconnect-for", type: .duration(in: .zero ... .seconds(3600)), default: .seconds(60), valueName: "duration",
        help: "How long a step whose connection is lost (a failover, a restart) goes on reconnecting, to the primary a multi-host URL with target_session_attrs=read-write finds, and finishes; 0s disables.")
    /// `--dry-run`
    static let dryRun = StandardParameters.dryRun
    /// `--accept-recompiled-plan`
    static let acceptRecompiledPlan = Flag(
        "accept-recompiled-plan",
        help: "For a declarative plan that an earlier Cutover began before it pinned plan.json's declaration: go on although this version compiles its SQL differently, as you vouch that plan.json is unchanged. Accepts differences only in the compiled files, the steps' file lists and the checks plan.json does not name (the compiler's), then pins the declaration; never a changed hand-written SQL file, table, legacy application pattern or check of plan.json's own, nor, once pinned, a changed declaration or compiler compatibility. The history records it.")
    /// `--skip-rehearsal`, for expand and contract.
    static let skipRehearsal = Flag(
        "skip-rehearsal",
        help: "Run without a passing 'phase rehearse' of this plan on this database (also CUTOVER_SKIP_REHEARSAL=1); the history records it.")
    /// The variable that skips the rehearsal gate as --skip-rehearsal does, for pipelines.
    static let skipRehearsalVariable = "CUTOVER_SKIP_REHEARSAL"

    /// The gate of expand and contract for a command line that `parsed` holds.
    static func rehearsalGate(_ parsed: ParsedCommand, environment: [String: String]) -> RehearsalGate {
        if parsed[skipRehearsal] { return .skipped(how: "--skip-rehearsal") }
        return rehearsalGate(environment: environment)
    }

    /// The gate as `status` and `check` show it, which take no --skip-rehearsal: the variable's.
    static func rehearsalGate(environment: [String: String]) -> RehearsalGate {
        if let value = environment[skipRehearsalVariable], !value.isEmpty, value != "0" {
            return .skipped(how: "\(skipRehearsalVariable)=\(value.prefix(16))")
        }
        return .required
    }

    /// The options in the order help lists them.
    static let parameters: [any CommandParameter] = [epoch, lockTimeout, statementTimeout, checkTimeout, maxRetries, maxBackoff, reconnectFor,
                                                     dryRun, acceptRecompiledPlan]

    /// The epoch the operator bound the command to, if any.
    let expectedEpoch: Int64?
    let lockTimeout: Duration
    let statementTimeout: Duration
    let checkTimeout: Duration
    let maxRetries: Int
    let maxBackoff: Duration
    let reconnectFor: Duration
    let isDryRun: Bool
    /// Whether the operator accepts a declarative plan's compiled parts as this version compiles them.
    let acceptsRecompiledPlan: Bool

    init(_ parsed: ParsedCommand) {
        expectedEpoch = parsed[Self.epoch].map(Int64.init)
        lockTimeout = parsed[Self.lockTimeout]
        statementTimeout = parsed[Self.statementTimeout]
        checkTimeout = parsed[Self.checkTimeout]
        maxRetries = parsed[Self.maxRetries]
        maxBackoff = parsed[Self.maxBackoff]
        reconnectFor = parsed[Self.reconnectFor]
        isDryRun = parsed[Self.dryRun]
        acceptsRecompiledPlan = parsed[Self.acceptRecompiledPlan]
    }

    /// How the runner runs a step's SQL files under these options.
    var sqlPolicy: SQLFileRunner.Policy {
        SQLFileRunner.Policy(lockTimeout: lockTimeout, statementTimeout: statementTimeout,
                             maximumAttempts: maxRetries + 1, maximumBackoff: maxBackoff)
    }

    /// What a stop by a signal leaves: nothing on a dry run; else a step that running it again finishes.
    var stopEffect: StopEffect {
        isDryRun ? .changedNothing : .finishedByRunningAgain
    }
}
