/// What a router holds: the fixed path or the source it follows, and its counts; shared by every router.
struct WriterSelection {
    private enum Choice {
        case fixed(SavePath)
        case following(any WriterPathSource)
    }

    private var choice: Choice
    private(set) var counts = SaveRouterCounts()

    /// Starts on a fixed path.
    init(_ path: SavePath) {
        choice = .fixed(path)
    }

    /// Starts following a source.
    init(following source: any WriterPathSource) {
        choice = .following(source)
    }

    /// The path the next operation will take.
    var path: SavePath {
        switch choice {
        case .fixed(let path): path
        case .following(let source): source.currentPath()
        }
    }

    /// Fixes the path, and stops following any source.
    mutating func use(_ path: SavePath) {
        choice = .fixed(path)
    }

    /// Follows `source`, replacing any fixed path or earlier source.
    mutating func follow(_ source: any WriterPathSource) {
        choice = .following(source)
    }

    /// Chooses the path of an operation that starts now and counts its call; call before any suspension.
    mutating func choose() -> SavePath {
        let chosen = path
        counts.recordCall(on: chosen)
        return chosen
    }

    /// Counts how the operation sent down `path` ended; an error other than ``SaveFailure`` is `outcomeUnknown`.
    mutating func record(_ result: Result<SaveOutcome, any Error>, on path: SavePath) {
        switch result {
        case .success(let outcome): counts.record(outcome, on: path)
        case .failure(let error): counts.record((error as? SaveFailure)?.outcome ?? .outcomeUnknown, on: path)
        }
    }
}
