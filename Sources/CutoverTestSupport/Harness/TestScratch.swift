import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Paths for the files and folders tests write, all under one folder per test process that
/// is removed when the process exits, so that a run leaves nothing in the temporary directory
/// whichever test wrote what, and whether or not that test removed it itself.
public enum TestScratch {
    /// A path no one has used yet, named `label-<UUID>`, in this process's scratch folder: the
    /// caller creates the file or folder it needs there.
    public static func url(_ label: String) -> URL {
        root.appendingPathComponent("\(label)-\(UUID().uuidString)")
    }

    /// The process's scratch folder, made and its removal at exit registered the first time a
    /// path is asked for.
    private static let root: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("cutover-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        // Should this fail, the caller's own write under it fails, naming the path.
        _ = try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        scratchRoot.withLock { $0 = url.path }
        atexit {
            guard let path = scratchRoot.withLock({ $0 }) else { return }
            // At exit nothing can be told of a failure; a folder left behind is only litter.
            _ = try? FileManager.default.removeItem(atPath: path)
        }
        return url
    }()
}

/// The scratch folder's path, for the exit handler, which captures nothing.
private let scratchRoot = Mutex<String?>(nil)
