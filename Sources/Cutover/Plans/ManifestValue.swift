/// A manifest value, or the absence of a key, with where it stands; its readers refuse what does not fit.
///
/// Every reader of an absent value throws ``PlanManifestProblem/missingKey(expected:)``
/// naming the kinds it would have accepted, so required keys need no separate check.
struct ManifestValue: Sendable {
    /// Where the value is, or would be.
    let path: ManifestPath
    /// The value; nil when its key is absent.
    let value: JSONValue?

    /// A fault at this value's place.
    func fault(_ problem: PlanManifestProblem) -> ManifestFault {
        ManifestFault(field: path, problem: problem)
    }

    /// The object here, refused when it names a key twice.
    func object() throws(ManifestFault) -> ManifestObject {
        let members = try require([.object]) { value -> [JSONMember]? in
            guard case .object(let members) = value else { return nil }
            return members
        }
        var names: Set<String> = []
        for member in members where !names.insert(member.name).inserted {
            throw fault(.repeatedKey(member.name))
        }
        return ManifestObject(path: path, members: members)
    }

    /// The elements of the array here, which must have a count in `allowed`.
    func array(count allowed: ClosedRange<Int>) throws(ManifestFault) -> [ManifestValue] {
        let elements = try require([.array]) { value -> [JSONValue]? in
            guard case .array(let elements) = value else { return nil }
            return elements
        }
        guard allowed.contains(elements.count) else {
            throw fault(.countOutOfRange(found: elements.count, allowed: allowed))
        }
        return elements.enumerated().map { ManifestValue(path: path.index($0.offset), value: $0.element) }
    }

    /// The string here, as it is.
    func string() throws(ManifestFault) -> String {
        try require([.string]) { value -> String? in
            guard case .string(let text) = value else { return nil }
            return text
        }
    }

    /// The string here, with a length in `allowed` and no control characters but, if allowed, tab and line breaks.
    func text(
        length allowed: ClosedRange<Int>, unit: PlanManifestProblem.LengthUnit = .characters,
        allowingLineBreaks: Bool = false
    ) throws(ManifestFault) -> String {
        let text = try string()
        let length = unit == .bytes ? text.utf8.count : text.unicodeScalars.count
        guard allowed.contains(length) else {
            throw fault(.lengthOutOfRange(found: length, allowed: allowed, unit: unit))
        }
        let permitted: Set<Unicode.Scalar> = allowingLineBreaks ? ["\t", "\n", "\r"] : []
        if let control = text.unicodeScalars.first(where: { DisplayText.isControl($0) && !permitted.contains($0) }) {
            throw fault(.controlCharacter(control))
        }
        return text
    }

    /// The integer here, written without fraction or exponent, within `allowed`.
    func integer(in allowed: ClosedRange<Int>) throws(ManifestFault) -> Int {
        let literal = try numberLiteral()
        guard let number = Int(literal), allowed.contains(number) else {
            throw fault(.integerOutOfRange(found: literal, allowed: allowed))
        }
        return number
    }

    /// The number here, within `allowed`; an exponent is allowed.
    func number(in allowed: ClosedRange<Double>) throws(ManifestFault) -> Double {
        let literal = try numberLiteral()
        guard let number = Double(literal), number.isFinite, allowed.contains(number) else {
            throw fault(.numberOutOfRange(found: literal, allowed: allowed))
        }
        return number
    }

    /// The number here, as its literal text.
    func numberLiteral() throws(ManifestFault) -> String {
        try require([.number]) { value -> String? in
            guard case .number(let literal) = value else { return nil }
            return literal
        }
    }

    /// The boolean here.
    func boolean() throws(ManifestFault) -> Bool {
        try require([.boolean]) { value -> Bool? in
            guard case .boolean(let flag) = value else { return nil }
            return flag
        }
    }

    /// What `extract` finds in the value, or a fault naming `kinds` when the value is absent or of another kind.
    func require<Found>(_ kinds: [JSONKind], _ extract: (JSONValue) -> Found?) throws(ManifestFault) -> Found {
        guard let value else { throw fault(.missingKey(expected: kinds)) }
        guard let found = extract(value) else { throw fault(.wrongType(expected: kinds, found: value.kind)) }
        return found
    }
}
