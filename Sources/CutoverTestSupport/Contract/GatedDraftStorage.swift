import Cutover

/// A ``DraftStorage`` wrapper that can hold one commit before it reaches the store, until released.
///
/// It stands for a writer that has received its request and not yet
/// committed: the moment a cutover must not disturb.
///
/// ```swift
/// await gate.holdNextCommit()
/// let pending = Task { try await router.save(request) }
/// let path = await gate.heldCommitPath()   // the save is now in flight
/// await router.use(.modern)
/// await gate.release()
/// ```
public actor GatedDraftStorage: DraftStorage {
    private let inner: any DraftStorage
    private var isArmed = false
    private var held: (path: SavePath, resume: CheckedContinuation<Void, Never>)?
    private var watchers: [CheckedContinuation<SavePath, Never>] = []

    /// A gate in front of `inner`, open until ``holdNextCommit()`` is called.
    public init(_ inner: any DraftStorage) {
        self.inner = inner
    }

    /// Makes the next commit wait at the gate until ``release()``.
    public func holdNextCommit() {
        isArmed = true
    }

    /// Waits until a commit is held at the gate and returns the path it came from.
    public func heldCommitPath() async -> SavePath {
        if let held { return held.path }
        return await withCheckedContinuation { watchers.append($0) }
    }

    /// Lets the held commit through to the store.
    public func release() {
        held?.resume.resume()
        held = nil
    }

    /// Forwards the commit, first waiting at the gate if it is armed.
    public func commit(_ request: SaveDraft, write: EncodedDraft, path: SavePath) async throws -> SaveResult {
        if isArmed {
            isArmed = false
            await withCheckedContinuation { continuation in
                held = (path, continuation)
                for watcher in watchers {
                    watcher.resume(returning: path)
                }
                watchers = []
            }
        }
        return try await inner.commit(request, write: write, path: path)
    }
}
