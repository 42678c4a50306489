import Cutover
import CutoverPostgres
import PostgresClient

/// The `phase` program: parses the arguments, runs the command, and maps every failure to one
/// clear line on standard error and its exit code.
public enum PhaseMain {
    /// Runs `phase` with `arguments` (without the program name) and returns its exit code.
    public static func run(_ arguments: [String], console: Console) async -> ExitCode {
        await PhaseCommandTree.program.run(arguments, console: console) { parsed in
            guard let type = parsed.command as? any PhaseCommand.Type else {
                throw CommandFailure("'\(parsed.path.joined(separator: " "))' needs a subcommand; see 'phase --help'", exitCode: .usage)
            }
            let command = type.init(parsed, context: PhaseContext(parsed, console: console))
            StopSignals.shared.describeStop { command.stopEffect.line(command: command.invocation, signal: $0.name) }
            let code: ExitCode
            do {
                code = try await command.run()
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
        case let error as PlanManifestError:
            // The plan is the operator's input: a malformed one is a usage error, nothing ran.
            return CommandFailure(error.description, exitCode: .usage)
        case let error as PlanSourceError:
            return CommandFailure(error.description, exitCode: .usage)
        case let lock as RunnerLockError:
            return CommandFailure(lock.description, exitCode: .lockHeld)
        case let refusal as PoolerRefusal:
            return CommandFailure(refusal.description, exitCode: .usage)
        case let error as PostgresError where PhaseContext.isStartupSettingsRefusal(error):
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
        case let error as PostgresError where error.sqlState == .dependentObjectsStillExist:
            // The detail names the objects (never row values); the server's hint, CASCADE, would
            // drop the application's own objects with the step's.
            let dependents = error.detail.map { $0.split(separator: "\n").map(String.init) } ?? []
            return CommandFailure(error.description, details: dependents + [
                "the step drops what these objects use: drop them, or make them again over the columns that stay, then run "
                    + "the step again (its failed statement's transaction was rolled back; 'phase status' shows where it stands)"])
        case let error as PostgresError where error.sqlState == .insufficientPrivilege:
            // An application's role, or any role but the migrator, running phase: nothing changed.
            return CommandFailure("this role may not do that: \(error.description)",
                                  details: ["run phase as the migrator role, which owns the cutover schema (docs/runbooks/roles.md)"])
        case let error as PostgresError:
            return CommandFailure(error.description, details: error.hint.map { ["hint: \($0)"] } ?? [])
        default:
            return CommandFailure(String(describing: error))
        }
    }
}
