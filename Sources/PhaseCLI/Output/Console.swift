import Cutover
import Foundation

/// Where a command writes: results to standard output, progress and diagnostics to standard
/// error, in colour only where that is welcome, and never a password.
///
/// Everything is injected, so a test builds one from ``CapturedOutput``s and an environment
/// of its choosing and sees exactly what a user would.
public struct Console: Sendable {
    /// Standard output: results only.
    public let output: any TextOutput
    /// Standard error: progress, notes, warnings and errors.
    public let diagnostics: any TextOutput
    /// The environment the program runs in (`NO_COLOR`, `TERM`, `DATABASE_URL`, …).
    public let environment: [String: String]
    /// What removes passwords from text before it is printed.
    public let redactor: SecretRedactor

    /// A console over the given streams.
    public init(output: any TextOutput, diagnostics: any TextOutput, environment: [String: String],
                redactor: SecretRedactor) {
        self.output = output
        self.diagnostics = diagnostics
        self.environment = environment
        self.redactor = redactor
    }

    /// This process's standard output and standard error and its environment.
    public static func standard(redactor: SecretRedactor) -> Console {
        Console(output: StandardStream.output, diagnostics: StandardStream.error,
                environment: ProcessInfo.processInfo.environment, redactor: redactor)
    }

    /// Colours for standard output.
    public var outputStyle: TextStyle { TextStyle(for: output, environment: environment) }
    /// Colours for standard error.
    public var diagnosticStyle: TextStyle { TextStyle(for: diagnostics, environment: environment) }

    /// `text` without passwords; use it on any database URL a result shows.
    public func redact(_ text: String) -> String {
        redactor(text)
    }

    /// Writes a result to standard output as text or as pretty-printed JSON, ending in a newline.
    ///
    /// Text keeps its line feeds and tabs; any other control character a value brought into it
    /// is written visibly (``DisplayText/terminalSafe(_:)``), whichever result it is.
    public func printResult(_ result: some CommandResult, format: OutputFormat) {
        switch format {
        case .text:
            let text = DisplayText.terminalSafe(result.text)
            output.write(text.hasSuffix("\n") || text.isEmpty ? text : text + "\n")
        case .json: output.write(result.json.text(.pretty) + "\n")
        }
    }

    /// Writes one line to standard error, passwords removed and control characters visible.
    public func printDiagnostic(_ line: String) {
        diagnostics.write(redact(DisplayText.terminalSafe(line)) + "\n")
    }

    /// Writes `Error: <message>` and any detail lines to standard error, passwords removed and
    /// control characters visible.
    public func printError(_ message: String, details: [String] = []) {
        diagnostics.write(redact(Self.errorText(DisplayText.terminalSafe(message), details: details.map(DisplayText.terminalSafe),
                                                style: diagnosticStyle)))
    }

    /// A progress reporter on standard error that suits it: redrawn at most every 100 ms on a
    /// terminal, one line per `lineInterval` elsewhere, silent when `isQuiet`.
    public func progress(label: String, total: Int?, isQuiet: Bool, lineInterval: Duration = .seconds(5),
                         clock: ProgressClock = .continuous()) -> ProgressReporter {
        let mode: ProgressReporter.Mode = isQuiet ? .silent
            : diagnostics.isTerminal ? .redraw(minimumInterval: .milliseconds(100))
            : .lines(interval: lineInterval)
        return ProgressReporter(label: label, total: total, output: diagnostics, mode: mode, clock: clock)
    }

    /// The lines of an error report: `Error: <message>`, then the details, each ending in a newline.
    static func errorText(_ message: String, details: [String], style: TextStyle) -> String {
        ([style.bold(style.red("Error:")) + " " + message] + details).map { $0 + "\n" }.joined()
    }
}
