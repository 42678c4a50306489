import Testing
public func probe() { #expect(1 == 1) }
