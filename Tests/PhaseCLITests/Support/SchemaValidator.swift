@testable import Cutover
import Foundation

/// A JSON Schema (draft 2020-12) validator for the keywords `docs/plan.schema.json` uses, and
/// only those: ``unsupportedKeywords`` names any other, so that the schema cannot lean on a
/// keyword this validator would pass over.
struct SchemaValidator {
    let schema: JSONValue

    /// The keywords checked here, and the annotations that check nothing.
    static let keywords: Set<String> = [
        "type", "properties", "additionalProperties", "required", "$ref", "oneOf", "anyOf", "allOf", "not", "if", "then",
        "else", "const", "enum", "items", "minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
        "minProperties", "maxProperties",
    ]
    static let annotations: Set<String> = ["$schema", "title", "description", "$defs"]

    init(_ bytes: [UInt8]) throws {
        schema = try JSONParser.parse(bytes)
    }

    /// The member `name` of an object value.
    static func member(_ value: JSONValue, _ name: String) -> JSONValue? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.name == name }?.value
    }

    /// The property names `$defs/<name>` declares.
    func propertyNames(ofDefinition name: String) -> Set<String> {
        guard let definition = Self.member(schema, "$defs").flatMap({ Self.member($0, name) }),
              case .object(let members)? = Self.member(definition, "properties") else { return [] }
        return Set(members.map(\.name))
    }

    /// Every keyword the schema uses that this validator does not check, with where it is.
    var unsupportedKeywords: [String] {
        var found: [String] = []
        func walk(_ value: JSONValue, at path: String) {
            guard case .object(let members) = value else { return }
            for member in members {
                let here = "\(path)/\(member.name)"
                switch member.name {
                case "properties", "$defs":
                    if case .object(let children) = member.value { for child in children { walk(child.value, at: "\(here)/\(child.name)") } }
                case "oneOf", "anyOf", "allOf":
                    if case .array(let elements) = member.value { for (index, element) in elements.enumerated() { walk(element, at: "\(here)/\(index)") } }
                case "items", "additionalProperties", "not", "if", "then", "else":
                    walk(member.value, at: here)
                default:
                    if !Self.keywords.contains(member.name) && !Self.annotations.contains(member.name) { found.append(here) }
                }
            }
        }
        walk(schema, at: "#")
        return found
    }

    /// Why `instance` does not match the schema; empty when it does.
    func problems(_ instance: JSONValue) -> [String] {
        problems(instance, against: schema, at: "$")
    }

    private func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var value: JSONValue? = schema
        for part in reference.dropFirst(2).split(separator: "/") { value = value.flatMap { Self.member($0, String(part)) } }
        return value
    }

    private func problems(_ instance: JSONValue, against schema: JSONValue, at path: String) -> [String] {
        guard case .object(let keywords) = schema else { return ["\(path): the schema here is not an object"] }
        var found: [String] = []
        for keyword in keywords {
            found += check(keyword.name, keyword.value, instance, in: schema, at: path)
        }
        return found
    }

    private func check(_ keyword: String, _ value: JSONValue, _ instance: JSONValue, in schema: JSONValue, at path: String) -> [String] {
        switch (keyword, value) {
        case ("$ref", .string(let reference)):
            guard let target = resolve(reference) else { return ["\(path): unresolved $ref \(reference)"] }
            return problems(instance, against: target, at: path)
        case ("type", .string(let type)):
            return Self.hasType(instance, type) ? [] : ["\(path): not of type \(type)"]
        case ("const", _):
            return instance == value ? [] : ["\(path): not the constant"]
        case ("enum", .array(let allowed)):
            return allowed.contains(instance) ? [] : ["\(path): not one of the enum's values"]
        case ("properties", .object(let properties)):
            guard case .object(let members) = instance else { return [] }
            return members.flatMap { member in
                properties.first { $0.name == member.name }.map { problems(member.value, against: $0.value, at: "\(path).\(member.name)") } ?? []
            }
        case ("additionalProperties", _):
            guard case .object(let members) = instance else { return [] }
            let declared = Self.member(schema, "properties").map { properties -> [String] in
                if case .object(let named) = properties { named.map(\.name) } else { [] }
            } ?? []
            let extra = members.filter { !declared.contains($0.name) }
            if case .boolean(false) = value { return extra.map { "\(path): key \($0.name) is not allowed" } }
            return extra.flatMap { problems($0.value, against: value, at: "\(path).\($0.name)") }
        case ("required", .array(let names)):
            guard case .object(let members) = instance else { return [] }
            return names.compactMap { name in
                guard case .string(let key) = name else { return "\(path): a required name is not a string" }
                return members.contains { $0.name == key } ? nil : "\(path): key \(key) is required"
            }
        case ("minProperties", .number(let limit)), ("maxProperties", .number(let limit)):
            guard case .object(let members) = instance, let bound = Int(limit) else { return [] }
            return (keyword == "minProperties" ? members.count >= bound : members.count <= bound) ? [] : ["\(path): \(keyword) \(bound)"]
        case ("items", _):
            guard case .array(let elements) = instance else { return [] }
            return elements.enumerated().flatMap { problems($1, against: value, at: "\(path)[\($0)]") }
        case ("minItems", .number(let limit)), ("maxItems", .number(let limit)):
            guard case .array(let elements) = instance, let bound = Int(limit) else { return [] }
            return (keyword == "minItems" ? elements.count >= bound : elements.count <= bound) ? [] : ["\(path): \(keyword) \(bound)"]
        case ("minLength", .number(let limit)), ("maxLength", .number(let limit)):
            guard case .string(let text) = instance, let bound = Int(limit) else { return [] }
            let length = text.unicodeScalars.count
            return (keyword == "minLength" ? length >= bound : length <= bound) ? [] : ["\(path): \(keyword) \(bound)"]
        case ("pattern", .string(let pattern)):
            guard case .string(let text) = instance else { return [] }
            guard let expression = try? NSRegularExpression(pattern: pattern) else { return ["\(path): pattern \(pattern) does not compile"] }
            let range = NSRange(text.startIndex..., in: text)
            return expression.firstMatch(in: text, range: range) == nil ? ["\(path): does not match \(pattern)"] : []
        case ("minimum", .number(let limit)), ("maximum", .number(let limit)):
            guard case .number(let literal) = instance, let number = Double(literal), let bound = Double(limit) else { return [] }
            return (keyword == "minimum" ? number >= bound : number <= bound) ? [] : ["\(path): \(keyword) \(limit)"]
        case ("allOf", .array(let schemas)):
            return schemas.flatMap { problems(instance, against: $0, at: path) }
        case ("anyOf", .array(let schemas)):
            return schemas.contains { problems(instance, against: $0, at: path).isEmpty } ? [] : ["\(path): matches none of anyOf"]
        case ("oneOf", .array(let schemas)):
            let matching = schemas.filter { problems(instance, against: $0, at: path).isEmpty }.count
            return matching == 1 ? [] : ["\(path): matches \(matching) of oneOf, not exactly one"]
        case ("not", _):
            return problems(instance, against: value, at: path).isEmpty ? ["\(path): matches what not refuses"] : []
        case ("if", _):
            let branch = problems(instance, against: value, at: path).isEmpty ? "then" : "else"
            return Self.member(schema, branch).map { problems(instance, against: $0, at: path) } ?? []
        default:
            // then and else are applied by if; annotations check nothing.
            return []
        }
    }

    private static func hasType(_ instance: JSONValue, _ type: String) -> Bool {
        switch (type, instance) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .boolean), ("null", .null), ("number", .number):
            true
        case ("integer", .number(let literal)):
            !literal.contains(".") && !literal.lowercased().contains("e")
        default:
            false
        }
    }
}
