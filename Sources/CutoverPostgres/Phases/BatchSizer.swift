import Cutover

/// Sizes a backfill's batches so that each takes about a target time, on a fast server and a
/// slow one, on an idle one and a busy one alike.
///
/// After each full batch the next size is the rows the last batches converted per unit of time,
/// times the target: with one worker, the last batch's size scaled by the target over the time it
/// took. The size is at most doubled and at least halved at a time, so that one slow batch (a
/// lock wait, a checkpoint) does not throw it far off. A batch that puts the size within a tenth
/// of where it is changes nothing. The batch that ends a pass (no key after it) may have found
/// fewer rows than it asked for, says nothing of the time a full one takes, and is not counted. A
/// target of zero keeps every batch at the first size.
///
/// Several workers share one sizer, whose ``window`` is their number: the rate is that of the
/// last as many batches as there are workers together, their rows over their time, each batch
/// with the size it asked for, so that the size follows every worker's batches, and batches
/// asked for before another worker's batch changed the size do not change it again by the same
/// factor.
public struct BatchSizer: Sendable, Equatable {
    /// The time each batch should take; zero does not adapt.
    public private(set) var target: Duration
    /// The sizes the sizer keeps to.
    public let range: ClosedRange<Int>
    /// Rows the next batch asks for.
    public private(set) var size: Int
    /// How many of the last batches the rate is taken over: the workers sharing the sizer.
    public var window: Int {
        didSet {
            window = max(1, window)
            recent.removeFirst(max(0, recent.count - window))
        }
    }
    /// The last batches counted, at most ``window`` of them.
    private var recent: [Sample] = []

    private struct Sample: Sendable, Equatable {
        var rows: Int
        var time: Duration
    }

    /// A sizer starting at `initial` rows.
    public init(initial: Int, target: Duration, range: ClosedRange<Int> = PlanLimits.batchSize, window: Int = 1) {
        self.target = target
        self.range = range
        self.window = max(1, window)
        size = min(max(initial, range.lowerBound), range.upperBound)
    }

    /// Follows `target` from the next batch on (an operator's retune); the size stays where it is.
    public mutating func retarget(_ target: Duration) {
        self.target = target
    }

    /// Whether the size follows the batches' time.
    public var isAdaptive: Bool { target > .zero }

    /// Takes account of a batch of ``size`` rows that took `time`; `endedPass` when it was the
    /// last of its pass.
    public mutating func record(time: Duration, endedPass: Bool) {
        record(rows: size, time: time, endedPass: endedPass)
    }

    /// Takes account of a batch that asked for `rows` rows and took `time`; `endedPass` when it
    /// was the last of its pass (or of its key range).
    public mutating func record(rows: Int, time: Duration, endedPass: Bool) {
        guard isAdaptive, !endedPass else { return }
        recent.append(Sample(rows: rows, time: time))
        recent.removeFirst(max(0, recent.count - window))
        let rows = recent.map(\.rows).reduce(0, +)
        let time = recent.map(\.time).reduce(.zero, +)
        // The factor from the size now to the size the batches' rate gives; batches too fast to
        // time count as twice as fast as the target.
        let ratio = time > .zero ? (target / time) * (Double(rows) / Double(size)) : 2
        guard ratio < 0.9 || ratio > 1.1 else { return }
        let scaled = (Double(size) * min(2, max(0.5, ratio))).rounded()
        size = Int(min(Double(range.upperBound), max(Double(range.lowerBound), scaled)))
    }
}
