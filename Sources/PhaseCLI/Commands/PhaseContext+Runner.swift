import Cutover
import CutoverPostgres
import PostgresClient
import Synchronization

extension PhaseContext {
    /// Reads the plan, connects, and runs `body` with a runner on a thread of its own.
    ///
    /// Every session the runner opens has its statements cancelled when a signal asks to stop.
    ///
    /// - Parameter isReadOnly: whether the command only reads, so that it may go on without
    ///   the session's start-up settings when a pooler (PgBouncer) refuses them.
    func withRunner<T: Sendable>(options: PhaseRunner.Options, isReadOnly: Bool,
                                 _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws -> T {
        let source = try planSource()
        let configuration = configuration
        let console = console
        let quiet = isQuiet
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
            Self.dropAbandonedRehearsals(on: runner.connection, console: console)
            return try body(runner)
        }
    }

    /// Drops the scratch databases of rehearsals that were killed, with one line each on
    /// standard error; a failure to look or to drop is one line too, never the command's failure.
    static func dropAbandonedRehearsals(on connection: PostgresConnection, console: Console) {
        do {
            let (dropped, failed) = try RehearsalRegistry.dropAbandoned(on: connection)
            for name in dropped { console.printDiagnostic("dropped scratch database \(name), left by a rehearsal that was killed") }
            for name in failed {
                console.printDiagnostic("warning: scratch database \(name), left by a rehearsal that was killed, could not be dropped by this role; drop it as its owner")
            }
        } catch let error as PostgresError where error.sqlState == .insufficientPrivilege {
            // A role that may not read the registry may not drop what it lists either; the
            // command itself says what this role may not do, if anything.
        } catch {
            console.printDiagnostic("warning: could not look for scratch databases left by killed rehearsals: \(error)")
        }
    }

    /// ``withRunner(options:isReadOnly:_:)`` for a command that only reads, with the default
    /// runner options.
    func withReadingRunner<T: Sendable>(options: PhaseRunner.Options? = nil,
                                        _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws -> T {
        try await withRunner(options: options ?? runnerOptions(), isReadOnly: true, body)
    }

    /// Like ``withRunner(options:isReadOnly:_:)`` for a changing step: when the step's session
    /// is lost (a failover, a restart), a new runner on a new session takes the lease, reads the
    /// state and runs the same step again, for up to `--reconnect-for`, with one line on
    /// standard error per attempt. Steps are compare-and-set transitions, so the step happens once.
    func withReconnectingRunner<T: Sendable>(step: PhaseStep, options: PhaseRunner.Options,
                                             _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws -> T {
        let console = console
        let reconnecting = ReconnectingStep(command: step.name, budget: steps.reconnectFor,
                                            isStopRequested: { StopSignals.shared.isStopRequested },
                                            log: { console.printDiagnostic($0) })
        return try await reconnecting.run {
            try await withRunner(options: options, isReadOnly: false) { runner in
                reconnecting.connected(backendPID: runner.connection.backendPID)
                return try body(runner)
            }
        }
    }
}
