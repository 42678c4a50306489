/// Asks `condition` again, `pause` apart, until it holds or `bound` has passed, and says
/// whether it held.
///
/// A test waits for the event it asserts, never for a time: the bound only turns a hang into a
/// failure, so it is generous (30 s) and has nothing to do with how fast the event should come;
/// a loaded machine may take long, and the test still passes as soon as the event happens.
///
/// ```swift
/// #expect(try await eventually { try await waitingSessions() > 0 })
/// ```
public func eventually(within bound: Duration = .seconds(30), pause: Duration = .milliseconds(20),
                       _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + bound
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: pause)
    }
}
