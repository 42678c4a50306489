import Foundation
import Testing

/// One runbook of `docs/runbooks/`, read into the steps its test runs.
///
/// The conventions (docs/runbooks/README.md describes them for writers):
/// - `**Starts at:**` followed by a phase in backticks (`none`, `baseline`, `expanded`, `modern`,
///   `backfilled`, `contracted`): where the database stands before the first command.
/// - In a ```` ```sh ```` block, every line that starts with `phase ` is run, in order; a trailing
///   `# exit N` says the exit code it must end with (0 when absent), and `# keeps running` marks
///   one that never ends by itself, shown only. Other lines are shown only.
/// - A ```` ```sql runbook ```` block is run through psql, as an operator would paste it.
/// - An ```` ```output ```` block lists lines the command just before it must print, in order
///   (a subset; `…` stands for any text within a line; trailing spaces do not count).
/// - An HTML comment `<!-- meanwhile: SQL -->`, invisible when rendered, runs SQL between two
///   steps: what the application fleet or the passing of time does, that no operator types.
struct Runbook: Sendable, CustomTestStringConvertible {
    /// Something the test does, with the runbook line it came from.
    enum Action: Sendable {
        /// `phase` with these arguments, expected to exit with `exitCode`.
        case phase([String], exitCode: Int32)
        /// A script for psql.
        case psql(String)
        /// SQL the world runs meanwhile, on a connection of its own.
        case meanwhile(String)
    }

    struct Step: Sendable {
        var action: Action
        var line: Int
        /// Lines the step must print (the output block after it), with the block's first line.
        var expected: [String] = []
        var expectedLine: Int?
    }

    /// The file's name, such as `expand.md`.
    let name: String
    /// The file's absolute path.
    let path: String
    /// The phase the database is in before the first step (`none`: no control schema yet).
    let startingPhase: String
    let steps: [Step]

    var testDescription: String { name }

    /// The folder of the runbooks, found from this file's place in the package.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/runbooks")

    /// The runbooks' file names, sorted; the folder's README.md is the index, not a runbook.
    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".md") && $0 != "README.md" }.sorted()
    }

    /// Reads a runbook of the folder.
    static func named(_ name: String) throws -> Runbook {
        let url = folder.appendingPathComponent(name)
        return try Runbook(name: name, path: url.path, text: String(contentsOf: url, encoding: .utf8))
    }

    /// The phases in their order; `none` is a database that Cutover has not touched.
    static let phases = ["none", "baseline", "expanded", "modern", "backfilled", "contracted"]

    init(name: String, path: String, text: String) throws {
        self.name = name
        self.path = path
        var starting: String?
        var steps: [Step] = []
        var fence: (kind: String, line: Int, body: [String])?
        var comment: (line: Int, body: [String])?
        let lines = text.components(separatedBy: "\n")
        for (index, line) in lines.enumerated() {
            let number = index + 1
            if var open = comment {
                open.body.append(line)
                comment = open
                if line.contains("-->") {
                    steps.append(try Self.meanwhile(open.body.joined(separator: "\n"), line: open.line, in: name))
                    comment = nil
                }
                continue
            }
            if let open = fence {
                if line.hasPrefix("```") {
                    try Self.close(open.kind, body: open.body, line: open.line, into: &steps, in: name)
                    fence = nil
                } else {
                    fence?.body.append(line)
                }
                continue
            }
            if line.hasPrefix("```") {
                fence = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), number, [])
            } else if line.hasPrefix("<!-- meanwhile") {
                if line.contains("-->") {
                    steps.append(try Self.meanwhile(line, line: number, in: name))
                } else {
                    comment = (number, [line])
                }
            } else if starting == nil, let range = line.range(of: "**Starts at:**") {
                starting = line[range.upperBound...].split(separator: "`", omittingEmptySubsequences: false).dropFirst().first.map(String.init)
            }
        }
        guard fence == nil, comment == nil else { throw RunbookError(name, "a block or comment is never closed") }
        guard let starting, Self.phases.contains(starting) else {
            throw RunbookError(name, "no '**Starts at:** `phase`' line naming one of \(Self.phases.joined(separator: ", "))")
        }
        self.startingPhase = starting
        self.steps = steps
    }

    private static func meanwhile(_ comment: String, line: Int, in name: String) throws -> Step {
        guard let start = comment.range(of: "meanwhile:"), let end = comment.range(of: "-->", options: .backwards) else {
            throw RunbookError(name, "line \(line): a meanwhile comment reads '<!-- meanwhile: SQL -->'")
        }
        return Step(action: .meanwhile(String(comment[start.upperBound..<end.lowerBound])), line: line)
    }

    private static func close(_ kind: String, body: [String], line: Int, into steps: inout [Step], in name: String) throws {
        switch kind {
        case "sh":
            for (offset, text) in body.enumerated() where text.trimmingCharacters(in: .whitespaces).hasPrefix("phase ") {
                guard let (arguments, exitCode) = try command(text, in: name, line: line + 1 + offset) else { continue }
                steps.append(Step(action: .phase(arguments, exitCode: exitCode), line: line + 1 + offset))
            }
        case "sql runbook":
            steps.append(Step(action: .psql(body.joined(separator: "\n") + "\n"), line: line + 1))
        case "output":
            guard let last = steps.indices.last, steps[last].expectedLine == nil, !isMeanwhile(steps[last]) else {
                throw RunbookError(name, "line \(line): an output block must follow a command that is run")
            }
            steps[last].expected = body
            steps[last].expectedLine = line + 1
        default:
            break
        }
    }

    private static func isMeanwhile(_ step: Step) -> Bool {
        if case .meanwhile = step.action { return true }
        return false
    }

    /// A `phase …` line's arguments and expected exit code: words split as a shell would
    /// (single and double quotes), up to a `#` that starts a comment. Nil for a command
    /// marked `# keeps running`, which is shown and not run.
    static func command(_ text: String, in name: String, line: Int) throws -> ([String], Int32)? {
        var words: [String] = []
        var word: String?
        var quote: Character?
        var comment = ""
        var characters = Substring(text.trimmingCharacters(in: .whitespaces))
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open { quote = nil } else { word?.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                word = word ?? ""
            } else if character == "#" && word == nil {
                comment = String(characters)
                break
            } else if character == " " || character == "\t" {
                if let done = word { words.append(done) }
                word = nil
            } else {
                word = (word ?? "") + String(character)
            }
        }
        guard quote == nil else { throw RunbookError(name, "line \(line): a quote is never closed") }
        if let done = word { words.append(done) }
        var exitCode: Int32 = 0
        let note = comment.trimmingCharacters(in: .whitespaces)
        if note.hasPrefix("keeps running") { return nil }
        if note.hasPrefix("exit ") {
            guard let code = Int32(note.dropFirst(5).prefix { $0.isNumber }) else {
                throw RunbookError(name, "line \(line): '# exit' needs a number")
            }
            exitCode = code
        }
        return (Array(words.dropFirst()), exitCode)
    }
}

/// A runbook that does not follow the conventions.
struct RunbookError: Error, CustomStringConvertible {
    let description: String
    init(_ name: String, _ problem: String) { description = "\(name): \(problem)" }
}
