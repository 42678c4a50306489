import Cutover
import PhaseCLI
import Testing

@Suite("Console and colour")
struct ConsoleTests {
    private struct Status: CommandResult {
        var text: String { "phase: expanded\n" }
        var json: JSONResult { ["phase": "expanded", "epoch": 4] }
    }

    private func console(terminal: Bool, environment: [String: String] = [:])
        -> (Console, output: CapturedOutput, diagnostics: CapturedOutput) {
        let output = CapturedOutput(isTerminal: terminal)
        let diagnostics = CapturedOutput(isTerminal: terminal)
        return (Console(output: output, diagnostics: diagnostics, environment: environment,
                        redactor: TestRedactor.redactor), output, diagnostics)
    }

    @Test func theLibrarysWarningsGoToStandardErrorAsOneLineEachAndInfoDoesNot() {
        let (console, output, diagnostics) = console(terminal: false)
        let logger = console.logger(label: "app-1")
        logger.log(.info, "fleet writer path: writer legacy, epoch 1 -> writer modern, epoch 2")
        logger.log(.warning, "reader heartbeat failed, trying again in 1.0 seconds: connection to postgresql://u:hunter22@db/app lost\u{1B}[2J",
                       metadata: ["instanceID": "app-1", "failures": "3"])
        logger.log(.error, "gave up")
        #expect(output.text.isEmpty)
        #expect(diagnostics.text == "warning: app-1: reader heartbeat failed, trying again in 1.0 seconds: "
                + "connection to postgresql://u:[redacted]@db/app lost\\u{1B}[2J (failures=3, instanceID=app-1)\n"
                + "error: app-1: gave up\n")
        #expect(!diagnostics.text.contains(TestRedactor.password))
    }

    @Test func colourOnlyOnATerminalWithoutNoColor() {
        #expect(console(terminal: true).0.diagnosticStyle.isEnabled)
        #expect(!console(terminal: false).0.diagnosticStyle.isEnabled)
        #expect(!console(terminal: true, environment: ["NO_COLOR": "1"]).0.diagnosticStyle.isEnabled)
        #expect(!console(terminal: true, environment: ["NO_COLOR": ""]).0.outputStyle.isEnabled)
        #expect(!console(terminal: true, environment: ["TERM": "dumb"]).0.outputStyle.isEnabled)
        #expect(console(terminal: true, environment: ["TERM": "xterm-256color"]).0.outputStyle.isEnabled)
    }

    @Test func eachStreamIsJudgedOnItsOwn() {
        let console = Console(output: CapturedOutput(isTerminal: false), diagnostics: CapturedOutput(isTerminal: true),
                              environment: [:], redactor: TestRedactor.redactor)
        #expect(!console.outputStyle.isEnabled)
        #expect(console.diagnosticStyle.isEnabled)
    }

    @Test func stylesWrapTextOnlyWhenEnabled() {
        #expect(TextStyle(isEnabled: true).red("no") == "\u{1B}[31mno\u{1B}[0m")
        #expect(TextStyle(isEnabled: true).bold("b") == "\u{1B}[1mb\u{1B}[0m")
        #expect(TextStyle(isEnabled: false).red("no") == "no")
    }

    @Test func errorsAreColouredOnATerminalAndPlainElsewhere() {
        let (colour, _, colourDiagnostics) = console(terminal: true)
        colour.printError("lock held", details: ["try again"])
        #expect(colourDiagnostics.text == "\u{1B}[1m\u{1B}[31mError:\u{1B}[0m\u{1B}[0m lock held\ntry again\n")
        let (plain, plainOutput, plainDiagnostics) = console(terminal: true, environment: ["NO_COLOR": "1"])
        plain.printError("lock held")
        #expect(plainDiagnostics.text == "Error: lock held\n")
        #expect(plainOutput.text == "")
    }

    @Test func resultsGoToStandardOutputInTheChosenFormat() {
        let (text, textOutput, textDiagnostics) = console(terminal: false)
        text.printResult(Status(), format: .text)
        #expect(textOutput.text == "phase: expanded\n")
        #expect(textDiagnostics.text == "")
        let (json, jsonOutput, _) = console(terminal: false)
        json.printResult(Status(), format: .json)
        #expect(jsonOutput.text == "{\n  \"epoch\": 4,\n  \"phase\": \"expanded\"\n}\n")
    }

    @Test func diagnosticsAndErrorsAreRedacted() {
        let (console, output, diagnostics) = console(terminal: false)
        let url = "postgresql://app:\(TestRedactor.password)@db/app"
        console.printDiagnostic("connecting to \(url)")
        console.printError("could not connect to \(url)", details: ["url: \(url)"])
        #expect(diagnostics.text == """
            connecting to postgresql://app:[redacted]@db/app
            Error: could not connect to postgresql://app:[redacted]@db/app
            url: postgresql://app:[redacted]@db/app

            """)
        #expect(console.redact(url) == "postgresql://app:[redacted]@db/app")
        #expect(output.text == "")
    }

    @Test func progressSuitsTheStream() {
        let clock = ManualClock().progressClock
        let (terminal, _, _) = console(terminal: true)
        let (piped, _, _) = console(terminal: false)
        #expect(terminal.progress(label: "x", total: 1, isQuiet: false, clock: clock).mode
                == .redraw(minimumInterval: .milliseconds(100)))
        #expect(piped.progress(label: "x", total: 1, isQuiet: false, lineInterval: .seconds(2), clock: clock).mode
                == .lines(interval: .seconds(2)))
        #expect(terminal.progress(label: "x", total: 1, isQuiet: true, clock: clock).mode == .silent)
        #expect(piped.progress(label: "x", total: 1, isQuiet: true, clock: clock).mode == .silent)
    }

    private struct Hostile: CommandResult {
        var text: String { "live  evil\u{1B}]0;owned\u{07}\tweb\u{9B}31m\u{7F}\r\nnext line\n" }
        var json: JSONResult { ["name": .string("evil\u{1B}[2J\u{7F}\u{85}")] }
    }

    @Test func controlCharactersReachNoStreamRaw() {
        let (console, output, diagnostics) = console(terminal: true)
        console.printResult(Hostile(), format: .text)
        #expect(output.text == #"live  evil\u{1B}]0;owned\u{7}"# + "\tweb" + #"\u{9B}31m\u{7F}\u{D}"# + "\nnext line\n")
        console.printResult(Hostile(), format: .json)
        #expect(output.text.contains(#""name": "evil\u001b[2J\u007f\u0085""#))
        console.printError("switch modern refused", details: ["observed evil\u{1B}]0;owned\u{07}"])
        console.printDiagnostic("reader web\u{1B}[2J")
        #expect(diagnostics.text.contains(#"observed evil\u{1B}]0;owned\u{7}"# + "\n"))
        #expect(diagnostics.text.hasSuffix(#"reader web\u{1B}[2J"# + "\n"))
        // The colour of `Error:` is the console's own, and stays.
        #expect(diagnostics.text.hasPrefix("\u{1B}[1m"))
    }
}
