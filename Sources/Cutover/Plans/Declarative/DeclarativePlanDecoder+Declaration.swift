extension DeclarativePlanDecoder {
    /// The root keys left out of ``DeclarativePlan/declarationText``: what the operator may
    /// change once the plan has begun, as the command line may anyway.
    private static let tuningKeys: Set<String> = ["modernWriterWindow", "backfill", "statements"]

    /// ``DeclarativePlan/declarationText`` of a manifest whose root object is `root`, which has
    /// passed every rule: canonical JSON (``JSONWriter``) of the root less the tuning keys and
    /// each check's `message`.
    static func declarationText(of root: ManifestObject) -> String {
        let kept = root.members.filter { !tuningKeys.contains($0.name) }.map { member in
            member.name == "checks" ? JSONMember(name: member.name, value: withoutMessages(member.value)) : member
        }
        return String(decoding: JSONWriter.bytes(of: .object(kept)), as: UTF8.self)
    }

    /// The plan's own checks (`{"expand": [{"name", …, "message"}], …}`) without their messages.
    private static func withoutMessages(_ checks: JSONValue) -> JSONValue {
        guard case .object(let kinds) = checks else { return checks }
        return .object(kinds.map { kind in
            guard case .array(let list) = kind.value else { return kind }
            return JSONMember(name: kind.name, value: .array(list.map { check in
                guard case .object(let fields) = check else { return check }
                return .object(fields.filter { $0.name != "message" })
            }))
        })
    }
}
