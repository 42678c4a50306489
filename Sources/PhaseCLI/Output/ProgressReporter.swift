import Cutover
import Synchronization

/// Shows how far a long operation has come, on standard error.
///
/// On a terminal it redraws one line — a bar, done/total, rate and time left — at most once
/// per `minimumInterval` (100 ms, so about ten times a second). Elsewhere it prints one plain
/// line per `interval`. Under `--quiet` it prints nothing. ``finish()`` prints a summary line
/// in the first two modes.
///
/// ```swift
/// let progress = console.progress(label: "backfill", total: rowsToConvert, isQuiet: parsed[StandardParameters.quiet])
/// for batch in batches { progress.update(completed: converted) }
/// progress.finish()
/// ```
public final class ProgressReporter: Sendable {
    /// How progress is shown.
    public enum Mode: Sendable, Equatable {
        /// Redraw one line in place, no more often than `minimumInterval`.
        case redraw(minimumInterval: Duration)
        /// Print a new line each time `interval` has passed since the last one.
        case lines(interval: Duration)
        /// Print nothing.
        case silent
    }

    private struct State {
        var completed = 0
        /// Units done before this run (``resume(from:)``): counted as done, not in the rate.
        var before = 0
        var total: Int?
        var lastShown: Duration?
        var isFinished = false
    }

    private static let barWidth = 24

    private let label: String
    private let output: any TextOutput
    /// How this reporter shows progress.
    public let mode: Mode
    private let clock: ProgressClock
    private let state = Mutex(State())

    /// A reporter for `total` units of work (nil when the total is unknown).
    public init(label: String, total: Int?, output: any TextOutput, mode: Mode, clock: ProgressClock) {
        self.label = label
        state.withLock { $0.total = total }
        self.output = output
        self.mode = mode
        self.clock = clock
    }

    /// Says that `completed` units were done before this run began: they count as done, and
    /// the rate and the time left are of this run's own work.
    public func resume(from completed: Int) {
        state.withLock { state in
            state.before = completed
            state.completed = max(state.completed, completed)
        }
    }

    /// Records that `completed` units are done (of `total`, when the total has become known or
    /// changed), and shows it if it is time to.
    public func update(completed: Int, total: Int? = nil) {
        let now = clock.elapsed()
        let text: String? = state.withLock { state in
            guard !state.isFinished else { return nil }
            state.completed = completed
            if let total { state.total = total }
            let total = state.total
            switch mode {
            case .silent:
                return nil
            case .redraw(let minimumInterval):
                if let last = state.lastShown, now - last < minimumInterval { return nil }
                state.lastShown = now
                return "\r\u{1B}[2K" + line(completed: completed, before: state.before, total: total, elapsed: now, withBar: true)
            case .lines(let interval):
                if now - (state.lastShown ?? .zero) < interval { return nil }
                state.lastShown = now
                return line(completed: completed, before: state.before, total: total, elapsed: now, withBar: false) + "\n"
            }
        }
        if let text { output.write(text) }
    }

    /// Prints the summary line (replacing the bar on a terminal); later calls do nothing.
    public func finish() {
        let now = clock.elapsed()
        let finished: (Int, Int, Int?)? = state.withLock { state in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            return (state.completed, state.before, state.total)
        }
        guard let (completed, before, total) = finished else { return }
        let done = "\(label): \(completed)\(total.map { "/\($0)" } ?? "") done"
        let summary = if before > 0 && completed == before {
            "\(done) before this run; this run found nothing left to do"
        } else {
            done + (before > 0 ? " (\(completed - before) in this run)" : "") + " in "
                + DurationText.format(.seconds(DurationText.milliseconds(in: now) / 1_000))
                + (rate(completed: completed - before, elapsed: now).map { ", \($0)/s" } ?? "")
        }
        switch mode {
        case .silent: return
        case .redraw: output.write("\r\u{1B}[2K" + summary + "\n")
        case .lines: output.write(summary + "\n")
        }
    }

    /// `backfill [######------] 500/1000 50% 250/s ETA 2s` (the bar only on a terminal).
    private func line(completed: Int, before: Int, total: Int?, elapsed: Duration, withBar: Bool) -> String {
        var parts = [label + ":"]
        if let total, total > 0 {
            let fraction = min(1, max(0, Double(completed) / Double(total)))
            if withBar {
                let filled = Int(fraction * Double(Self.barWidth))
                parts.append("[" + String(repeating: "#", count: filled)
                             + String(repeating: "-", count: Self.barWidth - filled) + "]")
            }
            parts.append("\(completed)/\(total)")
            parts.append("\(Int(fraction * 100))%")
        } else {
            parts.append("\(completed)")
        }
        if let rate = rate(completed: completed - before, elapsed: elapsed) {
            parts.append("\(rate)/s")
            if let total, rate > 0, completed < total {
                let secondsLeft = (Double(total - completed) / Double(rate)).rounded(.up)
                parts.append("ETA " + DurationText.format(.seconds(Int64(min(secondsLeft, 1e15)))))
            }
        }
        return parts.joined(separator: " ")
    }

    /// Units per second so far, or nil before any time has passed.
    private func rate(completed: Int, elapsed: Duration) -> Int? {
        let seconds = Double(DurationText.milliseconds(in: elapsed)) / 1_000
        return seconds > 0 ? Int((Double(completed) / seconds).rounded()) : nil
    }
}
