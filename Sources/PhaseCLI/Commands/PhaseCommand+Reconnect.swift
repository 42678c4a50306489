import Cutover
import CutoverPostgres
import PostgresClient

extension PhaseCommand {
    /// Like ``withRunner(options:_:)`` for a changing step: when the step's session is lost (a
    /// failover, a restart), a new runner on a new session takes the lease, reads the state and
    /// runs the same step again, for up to `--reconnect-for`, with one line on standard error
    /// per attempt. Steps are compare-and-set transitions, so the step happens once.
    func withReconnectingRunner<T: Sendable>(step: PhaseStep, options: PhaseRunner.Options? = nil,
                                             _ body: @escaping @Sendable (PhaseRunner) throws -> T) async throws -> T {
        let console = console
        let reconnecting = ReconnectingStep(command: step.name, budget: parsed[PhaseCommandTree.reconnectFor] ?? .seconds(60),
                                            isStopRequested: { StopSignals.shared.isStopRequested },
                                            log: { console.printDiagnostic($0) })
        return try await reconnecting.run {
            try await withRunner(options: options) { runner in
                reconnecting.connected(backendPID: runner.connection.backendPID)
                return try body(runner)
            }
        }
    }
}
