import Foundation

// Usage: EmbedSQLTool SQL_FOLDER OUTPUT.swift FILE...
// Writes a Swift file holding each FILE's text, keyed by its path relative to SQL_FOLDER.
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: EmbedSQLTool SQL_FOLDER OUTPUT FILE...\n".utf8))
    exit(64)
}
let folder = URL(fileURLWithPath: arguments[1]).standardizedFileURL.path
var source = """
    // Generated from the package's sql/ folder at build time. Do not edit.

    enum EmbeddedSQL {
        /// The text of every file under sql/, keyed by its path relative to that folder.
        static let files: [String: String] = [

    """
for path in arguments.dropFirst(3).sorted() {
    let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
    guard absolute.hasPrefix(folder + "/") else { continue }
    let relative = String(absolute.dropFirst(folder.count + 1))
    let text = try String(contentsOfFile: absolute, encoding: .utf8)
    // A raw string delimiter longer than any run of '#' in the text.
    var longest = 0, run = 0
    for character in text {
        run = character == "#" ? run + 1 : 0
        longest = max(longest, run)
    }
    let hashes = String(repeating: "#", count: longest + 1)
    source += "        \(hashes)\"\(relative)\"\(hashes): \(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes),\n"
}
source += "    ]\n}\n"
let data = Data(source.utf8)
if (try? Data(contentsOf: URL(fileURLWithPath: arguments[2]))) != data {
    try data.write(to: URL(fileURLWithPath: arguments[2]))
}
