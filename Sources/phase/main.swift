import Foundation
import PhaseCLI
import PostgresClient

StopSignals.shared.install()
let console = Console.standard(redactor: SecretRedactor { PasswordRedaction.redact($0) })
let code = await PhaseMain.run(Array(CommandLine.arguments.dropFirst()), console: console)
exit(code.rawValue)
