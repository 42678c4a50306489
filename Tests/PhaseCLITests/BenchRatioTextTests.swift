@testable import CutoverBench
import Testing

/// The benchmark's table shows a ratio that never seems to contradict its goal.
@Suite("The benchmark's ratios as the table shows them")
struct BenchRatioTextTests {
    private func result(ratio: Double?, goal: ScenarioResult.Goal) -> ScenarioResult {
        ScenarioResult(scenario: "s", unit: "rows/s", ours: 1, baselineName: nil, baseline: nil, ratio: ratio, goal: goal,
                       rows: 1, duration: 1, settings: "")
    }

    @Test("two decimals, or more where two would round across the goal's line")
    func decimals() {
        #expect(result(ratio: 0.9412, goal: .ratioAtLeast(0.9)).ratioText == "0.94×")
        #expect(result(ratio: 0.897, goal: .ratioAtLeast(0.9)).ratioText == "0.897×")
        #expect(result(ratio: 0.8996, goal: .ratioAtLeast(0.9)).ratioText == "0.8996×")
        #expect(result(ratio: 0.9, goal: .ratioAtLeast(0.9)).ratioText == "0.90×")
        #expect(result(ratio: 1.996, goal: .ratioBelow(2)).ratioText == "1.996×")
        #expect(result(ratio: 2.004, goal: .ratioBelow(2)).ratioText == "2.00×")
        #expect(result(ratio: 0.84999, goal: .ratioAtLeast(0.85)).ratioText == "0.84999×")
        #expect(result(ratio: 1.2345, goal: .none).ratioText == "1.23×")
        #expect(result(ratio: nil, goal: .ratioBelow(2)).ratioText == nil)
    }
}
