import Cutover

extension Console {
    /// A logger for the library objects a command runs (a store, a reader registration): its
    /// warnings and errors go to standard error as `warning: <label>: <message> (<metadata>)`,
    /// passwords removed and control characters visible.
    public func logger(label: String, minimumLevel: CutoverLogger.Level = .warning) -> CutoverLogger {
        let console = self
        return CutoverLogger(label: label, minimumLevel: minimumLevel) { record in
            console.printDiagnostic(record.description)
        }
    }
}
