import PhaseCLI
import Testing

@Suite("Progress")
struct ProgressReporterTests {
    private let clock = ManualClock()

    private func reporter(_ mode: ProgressReporter.Mode, total: Int? = 1000) -> (ProgressReporter, CapturedOutput) {
        let output = CapturedOutput(isTerminal: mode != .silent)
        return (ProgressReporter(label: "backfill", total: total, output: output, mode: mode,
                                 clock: clock.progressClock), output)
    }

    /// Reports one more unit every `step`, `count` times.
    private func drive(_ reporter: ProgressReporter, count: Int, every step: Duration) {
        for completed in 1...count {
            clock.advance(by: step)
            reporter.update(completed: completed)
        }
    }

    @Test func aTerminalIsRedrawnAtMostOncePer100Milliseconds() {
        let (reporter, output) = reporter(.redraw(minimumInterval: .milliseconds(100)))
        drive(reporter, count: 1000, every: .milliseconds(10))   // 10 seconds of updates
        let redraws = output.text.components(separatedBy: "\r\u{1B}[2K")
        #expect(redraws.count - 1 == 100)
        #expect(!output.text.contains("\n"))
    }

    @Test func aTerminalLineHasABarCountsRateAndTimeLeft() {
        let (reporter, output) = reporter(.redraw(minimumInterval: .milliseconds(100)))
        clock.advance(by: .seconds(2))
        reporter.update(completed: 500)
        #expect(output.text == "\r\u{1B}[2Kbackfill: [############------------] 500/1000 50% 250/s ETA 2s")
    }

    @Test func updatesCloserThanTheIntervalAreDropped() {
        let (reporter, output) = reporter(.redraw(minimumInterval: .milliseconds(100)))
        clock.advance(by: .seconds(1))
        reporter.update(completed: 1)
        clock.advance(by: .milliseconds(99))
        reporter.update(completed: 2)
        #expect(output.text.components(separatedBy: "\r").count - 1 == 1)
        clock.advance(by: .milliseconds(1))
        reporter.update(completed: 3)
        #expect(output.text.components(separatedBy: "\r").count - 1 == 2)
    }

    @Test func elsewhereOneLinePerInterval() {
        let (reporter, output) = reporter(.lines(interval: .seconds(1)))
        drive(reporter, count: 1000, every: .milliseconds(10))
        let lines = output.text.split(separator: "\n")
        #expect(lines.count == 10)
        #expect(lines.first == "backfill: 100/1000 10% 100/s ETA 9s")
        #expect(lines.last == "backfill: 1000/1000 100% 100/s")
        #expect(!output.text.contains("\r"))
        #expect(!output.text.contains("\u{1B}"))
    }

    @Test func finishPrintsOneSummaryLineOnlyOnce() {
        let (terminal, terminalOutput) = reporter(.redraw(minimumInterval: .milliseconds(100)))
        drive(terminal, count: 10, every: .milliseconds(400))
        terminal.finish()
        terminal.finish()
        terminal.update(completed: 11)
        #expect(terminalOutput.text.hasSuffix("\r\u{1B}[2Kbackfill: 10/1000 done in 4s, 3/s\n"))
        #expect(terminalOutput.text.components(separatedBy: "\n").count == 2)

        let (lines, linesOutput) = reporter(.lines(interval: .seconds(60)), total: nil)
        drive(lines, count: 10, every: .milliseconds(400))
        lines.finish()
        #expect(linesOutput.text == "backfill: 10 done in 8s, 1/s\n")
    }

    @Test func quietPrintsNothingAtAll() {
        let (reporter, output) = reporter(.silent)
        drive(reporter, count: 100, every: .seconds(1))
        reporter.finish()
        #expect(output.text == "")
    }

    @Test func anUnknownTotalShowsCountAndRateOnly() {
        let (reporter, output) = reporter(.lines(interval: .seconds(1)), total: nil)
        clock.advance(by: .seconds(4))
        reporter.update(completed: 2000)
        #expect(output.text == "backfill: 2000 500/s\n")
    }
}
