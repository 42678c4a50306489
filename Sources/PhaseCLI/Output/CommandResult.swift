/// What a command produces, in both of the forms `--format` chooses between.
///
/// ```swift
/// struct StatusResult: CommandResult {
///     var phase: String
///     var epoch: Int
///     var text: String { "phase: \(phase)\nepoch: \(epoch)\n" }
///     var json: JSONResult { ["phase": .string(phase), "epoch": .integer(Int64(epoch))] }
/// }
/// context.console.printResult(status, format: context.format)
/// ```
public protocol CommandResult {
    /// The result for people, ending in a newline.
    var text: String { get }
    /// The result for programs.
    var json: JSONResult { get }
}
