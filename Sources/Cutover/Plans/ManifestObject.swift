/// A manifest object whose keys are known to be distinct, read member by member.
struct ManifestObject: Sendable {
    /// Where the object is.
    let path: ManifestPath
    /// The members in document order.
    let members: [JSONMember]

    /// The member `key`, which readers refuse as missing when it is absent.
    subscript(key: String) -> ManifestValue {
        ManifestValue(path: path.key(key), value: members.first { $0.name == key }?.value)
    }

    /// The member `key`, or nil when it is absent.
    func optional(_ key: String) -> ManifestValue? {
        has(key) ? self[key] : nil
    }

    /// Whether the object has the member `key`.
    func has(_ key: String) -> Bool {
        members.contains { $0.name == key }
    }

    /// Refuses the object when it has keys outside `allowed`, naming them in document order.
    func refuseUnknownKeys(allowed: [String]) throws(ManifestFault) {
        let unknown = members.map(\.name).filter { !allowed.contains($0) }
        guard unknown.isEmpty else {
            throw ManifestFault(field: path, problem: .unknownKeys(unknown, allowed: allowed))
        }
    }
}
