import Cutover
import CutoverPostgres
import Foundation
import PostgresClient
import Synchronization

/// The `phase` program: parses the arguments, runs the command, and maps every failure to one
/// clear line on standard error and its exit code.
public enum PhaseMain {
    /// Runs `phase` with `arguments` (without the program name) and returns its exit code.
    public static func run(_ arguments: [String], console: Console) async -> ExitCode {
        await PhaseCommandTree.program.run(arguments, console: console) { parsed in
            let command = PhaseCommand(parsed: parsed, console: console)
            StopSignals.shared.describeStop { Self.stopLine(for: parsed, signal: $0) }
            let code: ExitCode
            do {
                code = try await command.perform()
            } catch {
                // A stop request ends the command whatever error the cancelled statement left.
                if let stopped = stopped(console) { return stopped }
                if let failure = error as? CommandFailure { throw failure }
                throw Self.failure(for: error)
            }
            return stopped(console) ?? code
        }
    }

    /// The exit code of a command stopped by a signal, after printing the one line that says
    /// so; nil when no signal asked to stop.
    private static func stopped(_ console: Console) -> ExitCode? {
        guard let signal = StopSignals.shared.received else { return nil }
        StopSignals.shared.writeLineOnce { console.printDiagnostic($0) }
        return signal.exitCode
    }

    /// Where a command stopped and how to go on, in one line.
    static func stopLine(for parsed: ParsedCommand, signal: StopSignals.Signal) -> String {
        var words = parsed.path
        if words == ["switch"], let path = parsed[PhaseCommandTree.path] { words.append(path) }
        if words == ["rollback"], let target = parsed[PhaseCommandTree.rollbackStep] { words.append(target.rawValue) }
        let command = words.joined(separator: " ")
        let stopped = "stopped by \(signal.name) during \(command)"
        let changes = ["init", "expand", "switch", "backfill", "contract", "rollback", "ledger"].contains(words.first ?? "")
        if ["demo", "soak"].contains(words.first ?? "") {
            return "\(stopped); its throw-away database was removed"
        } else if changes && !parsed[PhaseCommandTree.dryRun] {
            return "\(stopped); nothing is half done that 'phase \(command)' cannot finish: run it again, or 'phase status'"
        } else if words == ["observe"] && parsed[PhaseCommandTree.autoRollback] {
            return "\(stopped); a rollback it began is finished by 'phase rollback switch': see 'phase status'"
        }
        return "\(stopped); it changed nothing: run it again when ready"
    }

    /// The exit code and message for an error a command ended with.
    static func failure(for error: any Error) -> CommandFailure {
        switch error {
        case let refusal as StepRefusal:
            let details = refusal.failedChecks.map {
                "check failed: \($0.name): expected \($0.expected), observed \($0.observed)"
                    + ($0.message.isEmpty ? "" : " (\($0.message))")
            }
            return CommandFailure(refusal.reason.map { "\(refusal.step) refused: \($0)" } ?? "\(refusal.step) refused by its checks",
                                  details: details, exitCode: .refused)
        case let lock as RunnerLockError:
            return CommandFailure(lock.description, exitCode: .lockHeld)
        case let refusal as PoolerRefusal:
            return CommandFailure(refusal.description, exitCode: .usage)
        case let error as PostgresError where PhaseCommand.isStartupSettingsRefusal(error):
            // PgBouncer refuses the start-up settings that bound the runner's session.
            return CommandFailure(PoolerRefusal.startupSettingsRefused(error.message).description, exitCode: .usage)
        case let error as PostgresError where error.code == .connectionFailed:
            return CommandFailure("database unreachable: \(error.description)", exitCode: .databaseUnreachable)
        case let error as PostgresError where error.code == .accessDenied:
            return CommandFailure("the database refused to let the role in: \(error.description)",
                                  details: ["check the role, its password (~/.pgpass, PGPASSWORD), the database name and pg_hba.conf"],
                                  exitCode: .accessDenied)
        case let error as PostgresError where error.code == .invalidConfiguration:
            return CommandFailure(error.description, details: ["check --database-url or DATABASE_URL"], exitCode: .usage)
        case let error as PostgresError where error.code == .connectionLost || error.code == .outcomeUnknown:
            return CommandFailure("lost the connection to the database: \(error.description)",
                                  details: ["run the same command again: it resumes or finishes the step"],
                                  exitCode: .databaseUnreachable)
        case let error as PostgresError:
            return CommandFailure(error.description, details: error.hint.map { ["hint: \($0)"] } ?? [])
        default:
            return CommandFailure(String(describing: error))
        }
    }
}

/// One parsed command line and what it needs to run.
struct PhaseCommand: Sendable {
    let parsed: ParsedCommand
    let console: Console

    var format: OutputFormat { parsed[PhaseCommandTree.format] ?? .text }
    var isQuiet: Bool { parsed[PhaseCommandTree.quiet] }
    var isDryRun: Bool { parsed[PhaseCommandTree.dryRun] }

    var configuration: PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: parsed[PhaseCommandTree.databaseURL],
                                                  applicationName: "cutover-phase")
        // 10 s unless the URL's connect_timeout or PGCONNECT_TIMEOUT says otherwise.
        if !configuration.isConnectTimeoutGiven { configuration.connectTimeout = .seconds(10) }
        let statementTimeout = parsed[PhaseCommandTree.statementTimeout] ?? .seconds(600)
        configuration.keepalives = .recommended
        configuration.tcpUserTimeout = PostgresConfiguration.recommendedTCPUserTimeout
        configuration.sessionSettings = Self.sessionSettings(statementTimeout: statementTimeout)
        // The server ends any statement at its statement timeout and answers; a server that
        // has not answered well after that is not going to.
        configuration.responseTimeout = statementTimeout + .seconds(30)
        return configuration
    }

    /// The server settings of every session `phase` opens, given at connect time.
    ///
    /// They are start-up values rather than a `SET` after connecting because `SQLFileRunner`
    /// ends a file run outside a transaction with `RESET lock_timeout; RESET statement_timeout`,
    /// and RESET returns to the start-up value: these bounds hold again after it, with no
    /// change to how files run. A user's own `options` come after them and win.
    /// - `statement_timeout`, `lock_timeout`: a bound on everything the runner sends, checks and
    ///   bookkeeping included; DDL sets its own shorter lock timeout on top.
    /// - `idle_in_transaction_session_timeout`: a runner stuck mid-transaction gives its locks up.
    /// - `client_connection_check_interval` (PostgreSQL 14+), `tcp_keepalives_*`: the server
    ///   notices within seconds that the client went away, even during a long statement, and
    ///   ends the session, releasing the runner lock it held.
    static func sessionSettings(statementTimeout: Duration) -> [String: String] {
        let keepalives = PostgresConfiguration.Keepalives.recommended
        return [
            "statement_timeout": "\(DurationText.milliseconds(in: statementTimeout))ms",
            "lock_timeout": "\(DurationText.milliseconds(in: sessionLockTimeout))ms",
            "idle_in_transaction_session_timeout": "60s",
            "client_connection_check_interval": "5s",
            "tcp_keepalives_idle": "\(keepalives.idle.components.seconds)",
            "tcp_keepalives_interval": "\(keepalives.interval.components.seconds)",
            "tcp_keepalives_count": "\(keepalives.count)",
        ]
    }

    /// Whether the command only reads, so that it may run through any pooler: everything but
    /// init, the steps, rollbacks, ledger pruning and observe's automatic rollback.
    var isReadOnly: Bool {
        switch parsed.path.first {
        case "status", "readers", "history", "check", "compare", "plan": true
        case "observe": !parsed[PhaseCommandTree.autoRollback]
        default: false
        }
    }

    /// Whether connecting failed because something between refused the start-up settings
    /// (PgBouncer's `unsupported startup parameter: options`).
    static func isStartupSettingsRefusal(_ error: PostgresError) -> Bool {
        error.message.contains("unsupported startup parameter")
    }

    /// The longest any statement of `phase` waits for a lock unless it sets its own.
    static let sessionLockTimeout: Duration = .seconds(10)

    /// The plan: the folder given, or the built-in drafts plan.
    func planSource() throws -> PlanSource {
        if let folder = parsed[PhaseCommandTree.plan] { return try PlanSource.folder(folder) }
        return try PlanSource.builtIn()
    }

    var runnerOptions: PhaseRunner.Options {
        let sql = SQLFileRunner.Policy(
            lockTimeout: parsed[PhaseCommandTree.lockTimeout] ?? .milliseconds(500),
            statementTimeout: parsed[PhaseCommandTree.statementTimeout] ?? .seconds(600),
            maximumAttempts: (parsed[PhaseCommandTree.maxRetries] ?? 30) + 1,
            maximumBackoff: parsed[PhaseCommandTree.maxBackoff] ?? .seconds(5))
        var options = PhaseRunner.Options(sql: sql, backfill: nil, forceReaders: parsed[PhaseCommandTree.forceReaders],
                                          modernWriterWindow: parsed[PhaseCommandTree.window],
                                          readerStaleAfter: parsed[PhaseCommandTree.readerTimeout] ?? ReaderRegistry.defaultStaleAfter,
                                          isStopRequested: { StopSignals.shared.isStopRequested })
        options.standbys = standbyOptions
        return options
    }

    /// Notes to standard error, unless quiet.
    func note(_ line: String) {
        if !isQuiet { console.printDiagnostic(line) }
    }

    /// Reads the plan, connects, and runs `body` with a runner on a thread of its own.
    ///
    /// Every session the runner opens has its statements cancelled when a signal asks to stop.
    func withRunner<T: Sendable>(options: PhaseRunner.Options? = nil,
                                 _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws -> T {
        let source = try planSource()
        let configuration = configuration
        let options = options ?? runnerOptions
        let console = console
        let quiet = isQuiet
        let isReadOnly = isReadOnly
        return try await runOnDedicatedThread(named: "cutover-phase") {
            let withoutStartupSettings = Mutex(false)
            let open: @Sendable () throws -> PostgresConnection = {
                try StopSignals.shared.checkpoint()
                var configuration = configuration
                if withoutStartupSettings.withLock({ $0 }) { configuration.sessionSettings = [:] }
                let connection: PostgresConnection
                do {
                    connection = try PostgresConnection(configuration: configuration)
                } catch let error as PostgresError where isReadOnly && Self.isStartupSettingsRefusal(error) {
                    // A pooler (PgBouncer) takes no start-up settings. A command that only reads
                    // goes on without them, bounded by its client-side response timeout and the
                    // checks' transaction-local timeouts.
                    withoutStartupSettings.withLock { $0 = true }
                    if !quiet { console.printDiagnostic("note: the server's pooler refused the session's start-up settings; reading without them") }
                    configuration.sessionSettings = [:]
                    connection = try PostgresConnection(configuration: configuration)
                }
                connection.noticeHandler = { _ in }
                StopSignals.shared.register(connection.canceller)
                return connection
            }
            let runner = PhaseRunner(connection: try open(), source: source, options: options,
                                     log: { line in if !quiet { console.printDiagnostic(line) } }, openSession: open)
            return try body(runner)
        }
    }

    func perform() async throws -> ExitCode {
        switch parsed.path {
        case ["init"]: return try await initialize()
        case ["status"]: return try await status()
        case ["plan"]: return try await showPlan()
        case ["check"]: return try await check()
        case ["expand"]: return try await runStep(.expand)
        case ["switch"]: return try await runStep(parsed[PhaseCommandTree.path] == "legacy" ? .switchLegacy : .switchModern)
        case ["backfill"]: return try await backfill()
        case ["contract"]: return try await contract()
        case ["rollback"]: return try await rollback()
        case ["history"]: return try await history()
        case ["ledger", "prune"]: return try await pruneLedger()
        case ["readers"]: return try await readers()
        case ["observe"]: return try await observe()
        case ["compare"]: return try await compare()
        case ["soak"]:
            return try await SoakCommand(command: self, rows: parsed[PhaseCommandTree.rows] ?? 2000,
                                         duration: parsed[PhaseCommandTree.soakDuration] ?? .seconds(30)).run()
        case ["demo"]:
            return try await DemoCommand(command: self, rows: parsed[PhaseCommandTree.rows] ?? 2000,
                                         duration: parsed[PhaseCommandTree.duration] ?? .seconds(18)).run()
        default:
            throw CommandFailure("'\(parsed.path.joined(separator: " "))' needs a subcommand; see 'phase --help'", exitCode: .usage)
        }
    }
}
