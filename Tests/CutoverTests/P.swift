import Testing
import CutoverTestSupport
@Test func p() { probe() }
