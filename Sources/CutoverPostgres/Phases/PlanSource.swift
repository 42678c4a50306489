import Cutover
import Foundation

/// A migration plan with the text of every SQL file it names, read from a folder or from the
/// plans built into this binary.
public struct PlanSource: Sendable {
    /// The parsed manifest.
    public let plan: MigrationPlan
    /// Where it came from, for messages: a folder's path, or "built-in plan drafts".
    public let location: String
    /// Every SQL file the plan names, by its path in the plan.
    public let files: [String: String]

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
        let plan = try MigrationPlan(manifest: Array(manifest.utf8), file: "plan.json (built-in plan \(name))")
        var files: [String: String] = [:]
        for path in plan.sqlFilePaths { files[path] = try SQLFiles.text("\(name)/\(path)") }
        return PlanSource(plan: plan, location: "built-in plan \(name)", files: files)
    }

    /// The plan in `folder`: its `plan.json` and the SQL files it names.
    ///
    /// - Throws: ``PlanSourceError`` for a missing or unreadable folder or file, or a
    ///   `PlanManifestError` naming the field of a malformed manifest.
    public static func folder(_ folder: String) throws -> PlanSource {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw PlanSourceError.missingFolder(folder)
        }
        guard isFolder.boolValue else { throw PlanSourceError.notAFolder(folder) }
        let manifestPath = (folder as NSString).appendingPathComponent("plan.json")
        let manifest = try read(manifestPath, limit: 1024 * 1024 + 1)
        let plan = try MigrationPlan(manifest: manifest, file: manifestPath)
        var files: [String: String] = [:]
        for path in plan.sqlFilePaths {
            let full = (folder as NSString).appendingPathComponent(path)
            let bytes = try read(full, limit: maximumFileSize, namedBy: manifestPath)
            guard let text = String(validating: bytes, as: UTF8.self), !text.contains("\u{0}") else {
                throw PlanSourceError.notText(full)
            }
            files[path] = text
        }
        return PlanSource(plan: plan, location: folder, files: files)
    }

    private static func read(_ path: String, limit: Int, namedBy manifest: String? = nil) throws -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            if let manifest { throw PlanSourceError.missingFile(path, namedBy: manifest) }
            throw PlanSourceError.missingManifest(path)
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw PlanSourceError.unreadable(path) }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw PlanSourceError.unreadable(path)
        }
        guard data.count <= limit else { throw PlanSourceError.tooLarge(path, limit: limit) }
        return Array(data)
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

    public var description: String {
        switch self {
        case .missingFolder(let path): "plan folder \(path) does not exist"
        case .notAFolder(let path): "plan folder \(path) is not a folder"
        case .missingManifest(let path): "\(path) does not exist: a plan folder needs a plan.json"
        case .missingFile(let path, let manifest): "\(path), named by \(manifest), does not exist"
        case .unreadable(let path): "\(path) cannot be read (check its permissions)"
        case .tooLarge(let path, let limit): "\(path) is larger than \(limit / 1024) KiB, the most a plan file may be"
        case .notText(let path): "\(path) is not UTF-8 text"
        }
    }
}
