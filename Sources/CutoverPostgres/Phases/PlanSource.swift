import Cutover
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A migration plan with the text of every SQL file it names, read from a folder or from the
/// plans built into this binary.
public struct PlanSource: Sendable {
    /// The parsed manifest.
    public let plan: MigrationPlan
    /// Where it came from, for messages: a folder's path, or "built-in plan drafts".
    public let location: String
    /// Every SQL file the plan names, by its path in the plan: for a declarative plan, the
    /// compiled files and the `sql` operations' own.
    public let files: [String: String]
    /// What the compiler made of a declarative plan (format 2); nil for a plan of SQL files.
    public let compiled: CompiledPlan?
    /// The manifest's text, as read.
    public let manifest: String

    /// A source of a plan and its files' texts; `compiled` when it came from a declarative plan.
    public init(plan: MigrationPlan, location: String, files: [String: String], compiled: CompiledPlan? = nil, manifest: String = "") {
        self.plan = plan
        self.location = location
        self.files = files
        self.compiled = compiled
        self.manifest = manifest
    }

    /// Everything the plan is made of, in one text whose digest names this very plan: the
    /// manifest, then each file's path and text in path order.
    public var checksumText: String {
        ([manifest] + files.keys.sorted().flatMap { [$0, files[$0] ?? ""] }).joined(separator: "\u{1}")
    }

    /// The largest SQL file read.
    static let maximumFileSize = 4 * 1024 * 1024

    /// The text of a file the plan names.
    public func text(_ path: String) -> String {
        // Every path the plan names was read when the source was made.
        files[path] ?? ""
    }

    /// The plan built into this binary under `sql/<name>/` (the reference plan is `drafts`).
    public static func builtIn(_ name: String = "drafts") throws -> PlanSource {
        let manifest = try SQLFiles.text("\(name)/plan.json")
        return try make(manifest: Array(manifest.utf8), file: "plan.json (built-in plan \(name))",
                        location: "built-in plan \(name)") { path in try SQLFiles.text("\(name)/\(path)") }
    }

    /// The plan in `folder`: its `plan.json` and the SQL files it names.
    ///
    /// Only regular files are read, and a file reached through a symbolic link only when the
    /// link's target lies inside the folder: a FIFO would block every command, and a link to
    /// `/etc/passwd` would show and send that file as if it were part of the plan.
    ///
    /// - Throws: ``PlanSourceError`` for a missing or unreadable folder or file, or a
    ///   `PlanManifestError` naming the field of a malformed manifest.
    public static func folder(_ folder: String) throws -> PlanSource {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw PlanSourceError.missingFolder(folder)
        }
        guard isFolder.boolValue else { throw PlanSourceError.notAFolder(folder) }
        guard let root = realPath(folder) else { throw PlanSourceError.unreadable(folder) }
        let manifestPath = (folder as NSString).appendingPathComponent("plan.json")
        let manifest = try read(manifestPath, inside: root, limit: 1024 * 1024 + 1)
        return try make(manifest: manifest, file: manifestPath, location: folder) { path in
            let full = (folder as NSString).appendingPathComponent(path)
            let bytes = try read(full, inside: root, limit: maximumFileSize, namedBy: manifestPath)
            guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\u{0}") else {
                throw PlanSourceError.notText(full)
            }
            return text
        }
    }

    /// A source from a manifest of either format; `read` gives the text of a file the plan
    /// names (for a declarative plan, only the `sql` operations' files are read).
    private static func make(manifest: [UInt8], file: String, location: String,
                             read: (String) throws -> String) throws -> PlanSource {
        let text = String(decoding: manifest, as: UTF8.self)
        switch try PlanDocument(manifest: manifest, file: file) {
        case .files(let plan):
            var files: [String: String] = [:]
            for path in plan.sqlFilePaths { files[path] = try read(path) }
            return PlanSource(plan: plan, location: location, files: files, manifest: text)
        case .declarative(let declarative):
            let compiled = declarative.compile()
            var files = compiled.fileTexts
            for path in declarative.handWrittenFilePaths { files[path] = try read(path) }
            return PlanSource(plan: compiled.plan, location: location, files: files, compiled: compiled, manifest: text)
        }
    }

    /// The bytes of the regular file at `path`, whose real path must lie under `root`.
    private static func read(_ path: String, inside root: String, limit: Int, namedBy manifest: String? = nil) throws -> [UInt8] {
        guard let real = realPath(path) else {
            guard errno == ENOENT || errno == ENOTDIR else { throw PlanSourceError.unreadable(path) }
            if let manifest { throw PlanSourceError.missingFile(path, namedBy: manifest) }
            throw PlanSourceError.missingManifest(path)
        }
        guard real.hasPrefix(root.hasSuffix("/") ? root : root + "/") else { throw PlanSourceError.outsideFolder(path) }
        // The real path has no links left; O_NOFOLLOW refuses one put there since, and
        // O_NONBLOCK keeps a FIFO swapped in meanwhile from blocking the open.
        let descriptor = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw PlanSourceError.unreadable(path) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw PlanSourceError.unreadable(path) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw PlanSourceError.notARegularFile(path, kind: fileKind(status.st_mode))
        }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count <= limit {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, limit + 1 - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw PlanSourceError.unreadable(path) }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else { throw PlanSourceError.tooLarge(path, limit: limit) }
        return Array(bytes[..<count])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a folder"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}

/// A plan folder that cannot be read.
public enum PlanSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such folder.
    case missingFolder(String)
    /// The path is a file, not a folder.
    case notAFolder(String)
    /// The folder has no plan.json.
    case missingManifest(String)
    /// A SQL file the manifest names does not exist.
    case missingFile(String, namedBy: String)
    /// A file exists but cannot be read.
    case unreadable(String)
    /// A file is larger than a plan file may be.
    case tooLarge(String, limit: Int)
    /// A SQL file is not UTF-8 text.
    case notText(String)
    /// A file is a FIFO, a device, a folder or a socket; `kind` says which.
    case notARegularFile(String, kind: String)
    /// A file is a symbolic link whose target lies outside the plan folder.
    case outsideFolder(String)

    public var description: String {
        switch self {
        case .missingFolder(let path): "plan folder \(path) does not exist"
        case .notAFolder(let path): "plan folder \(path) is not a folder"
        case .missingManifest(let path): "\(path) does not exist: a plan folder needs a plan.json"
        case .missingFile(let path, let manifest): "\(path), named by \(manifest), does not exist"
        case .unreadable(let path): "\(path) cannot be read (check its permissions)"
        case .tooLarge(let path, let limit): "\(path) is larger than \(limit / 1024) KiB, the most a plan file may be"
        case .notText(let path): "\(path) is not UTF-8 text"
        case .notARegularFile(let path, let kind): "\(path) is \(kind), not a regular file: a plan reads regular files only"
        case .outsideFolder(let path): "\(path) is a link that leads outside the plan folder: a plan reads only its own files"
        }
    }
}
