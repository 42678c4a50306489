/// How many saves a router sent down each path and how each ended, by outcome code; never payloads.
public struct SaveRouterCounts: Sendable, Hashable {
    private var callsByPath: [SavePath: Int] = [:]
    private var outcomesByPath: [SavePath: [SaveOutcome: Int]] = [:]

    /// Counts of nothing.
    public init() {}

    /// How many saves were sent down `path`.
    public func calls(on path: SavePath) -> Int {
        callsByPath[path, default: 0]
    }

    /// How many saves sent down `path` ended with `outcome`.
    public func count(of outcome: SaveOutcome, on path: SavePath) -> Int {
        outcomesByPath[path]?[outcome] ?? 0
    }

    /// Every outcome seen on `path` with its count; outcomes never seen are absent.
    public func outcomes(on path: SavePath) -> [SaveOutcome: Int] {
        outcomesByPath[path] ?? [:]
    }

    mutating func recordCall(on path: SavePath) {
        callsByPath[path, default: 0] += 1
    }

    mutating func record(_ outcome: SaveOutcome, on path: SavePath) {
        outcomesByPath[path, default: [:]][outcome, default: 0] += 1
    }
}
