import CommandLineKit
import Cutover
import CutoverPostgres
import PostgresClient

/// What every `phase` command shares: the global options, the step and standby options as
/// the command line gave them (their defaults for a command that declares none), and the
/// console.
struct PhaseContext: Sendable {
    /// `--database-url`
    static let databaseURL = Option(
        "database-url", type: .string, valueName: "url", environmentVariable: "DATABASE_URL",
        help: "The PostgreSQL database to work on, as a URI or a keyword/value string; without it, libpq's PG* variables and ~/.pgpass apply.")
    /// `--plan`
    static let plan = Option(
        "plan", type: .string, valueName: "dir",
        help: "The folder holding plan.json and the SQL of each step; the built-in reference plan when omitted (phase plan shows it).")
    /// The options every command accepts, before or after its name.
    static let parameters: [any CommandParameter] = [databaseURL, plan, StandardParameters.format, StandardParameters.quiet]

    /// The longest any statement of `phase` waits for a lock unless it sets its own.
    static let sessionLockTimeout: Duration = .seconds(10)

    let console: Console
    let databaseURL: String?
    let planFolder: String?
    let format: OutputFormat
    let isQuiet: Bool
    /// The step options; their defaults for a command that does not take them.
    let steps: StepOptions
    /// The standbys named; none but those of `CUTOVER_STANDBY_URLS` for a command that takes no `--standby`.
    let standbys: StandbyParameters

    init(_ parsed: ParsedCommand, console: Console) {
        self.console = console
        databaseURL = parsed[Self.databaseURL]
        planFolder = parsed[Self.plan]
        format = parsed[StandardParameters.format]
        isQuiet = parsed[StandardParameters.quiet]
        steps = StepOptions(parsed)
        standbys = StandbyParameters(parsed)
    }

    /// Notes to standard error, unless quiet.
    func note(_ line: String) {
        if !isQuiet { console.printDiagnostic(line) }
    }

    /// The plan: the folder given, or the built-in drafts plan.
    func planSource() throws -> PlanSource {
        if let planFolder { return try PlanSource.folder(planFolder) }
        return try PlanSource.builtIn()
    }

    /// How every session `phase` opens connects: the database named, within 10 s, with
    /// keepalives and bounds on every statement.
    var configuration: PostgresConfiguration {
        var configuration = PostgresConfiguration(connectionString: databaseURL, applicationName: "cutover-phase")
        // 10 s unless the URL's connect_timeout or PGCONNECT_TIMEOUT says otherwise.
        if !configuration.isConnectTimeoutGiven { configuration.connectTimeout = .seconds(10) }
        configuration.keepalives = .recommended
        configuration.tcpUserTimeout = PostgresConfiguration.recommendedTCPUserTimeout
        configuration.sessionSettings = Self.sessionSettings(statementTimeout: steps.statementTimeout)
        // The server ends any statement at its statement timeout and answers; a server that
        // has not answered well after that is not going to.
        configuration.responseTimeout = max(steps.statementTimeout, steps.checkTimeout) + .seconds(30)
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
    /// - `row_security`: off, so a statement that row-level security would filter fails rather
    ///   than convert, count or check only the rows the policies show the runner's role.
    /// - `client_connection_check_interval` (PostgreSQL 14+), `tcp_keepalives_*`: the server
    ///   notices within seconds that the client went away, even during a long statement, and
    ///   ends the session, releasing the runner lock it held.
    static func sessionSettings(statementTimeout: Duration) -> [String: String] {
        let keepalives = PostgresConfiguration.Keepalives.recommended
        return [
            "statement_timeout": "\(DurationText.milliseconds(in: statementTimeout))ms",
            "lock_timeout": "\(DurationText.milliseconds(in: sessionLockTimeout))ms",
            "idle_in_transaction_session_timeout": "60s",
            "row_security": "off",
            "client_connection_check_interval": "5s",
            "tcp_keepalives_idle": "\(keepalives.idle.components.seconds)",
            "tcp_keepalives_interval": "\(keepalives.interval.components.seconds)",
            "tcp_keepalives_count": "\(keepalives.count)",
        ]
    }

    /// Whether connecting failed because something between refused the start-up settings
    /// (PgBouncer's `unsupported startup parameter: options`).
    static func isStartupSettingsRefusal(_ error: PostgresError) -> Bool {
        error.message.contains("unsupported startup parameter")
    }

    /// The runner's options from the step and standby options, and what the command adds.
    func runnerOptions(forceReaders: Bool = false, modernWriterWindow: Duration? = nil,
                       readerStaleAfter: Duration = ReaderRegistry.defaultStaleAfter) -> PhaseRunner.Options {
        var options = PhaseRunner.Options(sql: steps.sqlPolicy, backfill: nil, forceReaders: forceReaders,
                                          modernWriterWindow: modernWriterWindow, readerStaleAfter: readerStaleAfter,
                                          isStopRequested: { StopSignals.shared.isStopRequested })
        options.standbys = standbys.options(reachedLike: configuration)
        options.acceptsRecompiledPlan = steps.acceptsRecompiledPlan
        options.checkTimeout = steps.checkTimeout
        return options
    }
}
