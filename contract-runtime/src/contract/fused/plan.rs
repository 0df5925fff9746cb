//! Compiling a canonical contract schema into a [`Plan`]: a flat table of nodes the
//! validating serializer walks while it writes. A schema the plan cannot judge exactly
//! is refused here, once per contract, with the reason; the pipeline then keeps the
//! `Value` + `jsonschema` path for that contract.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use crate::contract::schema::ANNOTATIONS;

/// JSON types as bits; `NUMBER` includes the integers.
pub(crate) const NULL: u8 = 1;
pub(crate) const BOOL: u8 = 2;
pub(crate) const INTEGER: u8 = 4;
pub(crate) const NUMBER: u8 = 8;
pub(crate) const STRING: u8 = 16;
pub(crate) const ARRAY: u8 = 32;
pub(crate) const OBJECT: u8 = 64;
const ALL: u8 = 127;

/// The node that accepts every value.
pub(crate) const ANY: usize = 0;
/// The node that accepts no value.
pub(crate) const NEVER: usize = 1;

/// One compiled subschema.
#[derive(Debug)]
pub(crate) enum Node {
    /// Accepts everything (`true`, or only annotations).
    Any,
    /// Accepts nothing (`false`).
    Never,
    /// Another node (a `$ref` with at most annotations beside it).
    Ref(usize),
    /// `anyOf` / `oneOf` whose branches take disjoint JSON types, so the first event
    /// of a value picks the one branch that can match: both keywords then agree.
    Union(Vec<(u8, usize)>),
    /// Keywords on one value.
    Typed(Box<Typed>),
}

/// What to do with an object key no property names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// Allowed, unchecked.
    Any,
    /// Refused (a closed object).
    Never,
    /// Checked against this node.
    Node(usize),
}

/// The checks on one value; each applies only to the JSON types it is about.
#[derive(Debug)]
pub(crate) struct Typed {
    pub(crate) types: u8,
    /// `enum` / `const`: scalar values only.
    pub(crate) allowed: Option<Vec<Value>>,
    pub(crate) minimum: Option<Number>,
    pub(crate) maximum: Option<Number>,
    pub(crate) exclusive_minimum: Option<Number>,
    pub(crate) exclusive_maximum: Option<Number>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    /// `pattern` and `format`, judged by the same validator the `Value` path uses so
    /// both paths agree on regex dialect and format grammar.
    pub(crate) leaf: Option<jsonschema::Validator>,
    pub(crate) items: usize,
    pub(crate) min_items: Option<u64>,
    pub(crate) max_items: Option<u64>,
    /// Properties with their node and their bit among the required keys.
    pub(crate) properties: Vec<(Box<str>, usize, Option<u32>)>,
    /// Required keys no property names (they can only arrive as extra keys).
    pub(crate) required_extra: Vec<(Box<str>, u32)>,
    /// All required bits set.
    pub(crate) required_mask: u64,
    pub(crate) extra: Extra,
}

impl Typed {
    fn unconstrained() -> Self {
        Self {
            types: ALL,
            allowed: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            min_length: None,
            max_length: None,
            leaf: None,
            items: ANY,
            min_items: None,
            max_items: None,
            properties: Vec::new(),
            required_extra: Vec::new(),
            required_mask: 0,
            extra: Extra::Any,
        }
    }

    /// Whether `type` and the list are all this node checks.
    fn only_allowed(&self) -> bool {
        self.minimum.is_none()
            && self.maximum.is_none()
            && self.exclusive_minimum.is_none()
            && self.exclusive_maximum.is_none()
            && self.min_length.is_none()
            && self.max_length.is_none()
            && self.leaf.is_none()
            && self.items == ANY
            && self.min_items.is_none()
            && self.max_items.is_none()
            && self.properties.is_empty()
            && self.required_mask == 0
            && self.extra == Extra::Any
    }
}

/// A compiled contract schema.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: usize,
}

impl Plan {
    /// Compiles `schema`, or says why it cannot be judged on the event stream.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        let mut compiler = Compiler {
            root: schema,
            nodes: vec![Node::Any, Node::Never],
            refs: HashMap::new(),
            pending: HashMap::new(),
        };
        let root = compiler.node(schema, "")?;
        Ok(Self { nodes: compiler.nodes, root })
    }
}

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    refs: HashMap<String, usize>,
    /// The JSON types of references still being compiled (a recursive type met inside
    /// itself), read from their `type` keyword, which their compiled node will keep.
    pending: HashMap<usize, u8>,
}

/// Keywords that constrain nothing where our canonical schemas put them.
fn ignorable(key: &str) -> bool {
    ANNOTATIONS.contains(&key) || matches!(key, "$schema" | "$defs" | "definitions") || key.starts_with("x-")
}

impl Compiler<'_> {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn node(&mut self, schema: &Value, at: &str) -> Result<usize, String> {
        let obj = match schema {
            Value::Bool(true) => return Ok(ANY),
            Value::Bool(false) => return Ok(NEVER),
            Value::Object(obj) => obj,
            _ => return Err(format!("{at}: a schema that is neither an object nor a boolean")),
        };
        // The canonical form writes `"type": "object"` beside a root `$ref` or union whose
        // instances are all objects: it adds nothing the target does not say, so the plan
        // reads the target and checks that it is objects only.
        let object_marker = obj.get("type").is_some_and(|t| t == "object")
            && ["$ref", "anyOf", "oneOf"].iter().any(|k| obj.contains_key(*k));
        let constraining: Vec<&str> =
            obj.keys().map(String::as_str).filter(|k| !(ignorable(k) || (object_marker && *k == "type"))).collect();
        if constraining.is_empty() {
            return Ok(ANY);
        }
        if let Some(reference) = obj.get("$ref") {
            if constraining.len() > 1 {
                return Err(format!("{at}: $ref beside other keywords"));
            }
            let id = self.reference(reference, at)?;
            return self.objects_only(id, object_marker, at);
        }
        if let Some(merged) = type_list_of_branches(obj) {
            let id = self.push(Node::Any);
            let typed = self.typed(&merged, at)?;
            self.nodes[id] = Node::Typed(Box::new(typed));
            return Ok(id);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = obj.get(key) {
                if constraining.len() > 1 {
                    return Err(format!("{at}: {key} beside other keywords"));
                }
                let id = self.union(branches, &format!("{at}/{key}"))?;
                return self.objects_only(id, object_marker, at);
            }
        }
        let id = self.push(Node::Any);
        let typed = self.typed(obj, at)?;
        self.nodes[id] = Node::Typed(Box::new(typed));
        Ok(id)
    }

    /// `id`, when no `"type": "object"` stands beside it or every instance it allows is an
    /// object; otherwise that `type` would constrain, and the plan does not judge it.
    fn objects_only(&self, id: usize, object_marker: bool, at: &str) -> Result<usize, String> {
        if object_marker && self.types_of(id, 0) != Some(OBJECT) {
            return Err(format!("{at}: `type` beside a $ref or union that is not objects only"));
        }
        Ok(id)
    }

    fn reference(&mut self, reference: &Value, at: &str) -> Result<usize, String> {
        let Some(target) = reference.as_str() else { return Err(format!("{at}: a $ref that is not a string")) };
        if let Some(&id) = self.refs.get(target) {
            return Ok(id);
        }
        let resolved = target
            .strip_prefix('#')
            .filter(|p| !p.contains('%'))
            .and_then(|pointer| self.root.pointer(pointer))
            .ok_or_else(|| format!("{at}: a $ref this plan does not resolve ({target})"))?;
        // Reserved before compiling the target, so a recursive type refers to itself.
        let id = self.push(Node::Any);
        self.refs.insert(target.to_owned(), id);
        if let Some(obj) = resolved.as_object() {
            // Only a node that compiles to `Typed` keeps exactly its `type`.
            let plain = !["$ref", "anyOf", "oneOf"].iter().any(|k| obj.contains_key(*k));
            if let (true, Some(bits)) = (plain, obj.get("type").and_then(type_bits)) {
                self.pending.insert(id, bits);
            }
        }
        let inner = self.node(resolved, target)?;
        self.pending.remove(&id);
        self.nodes[id] = Node::Ref(inner);
        Ok(id)
    }

    fn union(&mut self, branches: &Value, at: &str) -> Result<usize, String> {
        let Some(branches) = branches.as_array() else { return Err(format!("{at}: not an array")) };
        let ids = branches
            .iter()
            .enumerate()
            .map(|(i, branch)| self.node(branch, &format!("{at}/{i}")))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(merged) = self.merged_constants(&ids) {
            return Ok(self.push(Node::Typed(Box::new(merged))));
        }
        let mut compiled = Vec::with_capacity(branches.len());
        let mut taken = 0u8;
        for (i, id) in ids.into_iter().enumerate() {
            let types = self.types_of(id, 0).ok_or_else(|| format!("{at}/{i}: a branch of unknown type"))?;
            // An integer is a number: the two overlap.
            let wide = if types & (INTEGER | NUMBER) != 0 { types | INTEGER | NUMBER } else { types };
            if wide & taken != 0 {
                return Err(format!("{at}: branches that share a JSON type need backtracking"));
            }
            taken |= wide;
            compiled.push((types, id));
        }
        Ok(self.push(Node::Union(compiled)))
    }

    /// Branches that each allow only listed strings, booleans or nulls (a unit enum
    /// with documented variants: `oneOf` of `const`s), as one list. With no value in two
    /// branches, exactly one branch matches each allowed value, so `anyOf` and `oneOf`
    /// both mean "one of the list". Numbers are left out: `1` and `1.0` are one value.
    fn merged_constants(&self, ids: &[usize]) -> Option<Typed> {
        let mut merged = Typed::unconstrained();
        merged.types = 0;
        let mut values: Vec<Value> = Vec::new();
        for &id in ids {
            let Node::Typed(typed) = &self.nodes[id] else { return None };
            let allowed = typed.allowed.as_ref()?;
            if !typed.only_allowed() {
                return None;
            }
            for value in allowed {
                let bits = match value {
                    Value::String(_) => STRING,
                    Value::Bool(_) => BOOL,
                    Value::Null => NULL,
                    _ => return None,
                };
                if typed.types & bits == 0 {
                    // A value its own branch refuses: not one of the list.
                    continue;
                }
                if values.contains(value) {
                    return None;
                }
                merged.types |= bits;
                values.push(value.clone());
            }
        }
        merged.allowed = Some(values);
        Some(merged)
    }

    /// The JSON types a node can accept, or `None` when that is not known yet (a
    /// recursive reference still being compiled) or is every type.
    fn types_of(&self, id: usize, hops: usize) -> Option<u8> {
        if hops > 64 {
            return None;
        }
        match &self.nodes[id] {
            Node::Any => self.pending.get(&id).copied(),
            Node::Never => Some(0),
            Node::Ref(inner) => self.types_of(*inner, hops + 1),
            Node::Union(branches) => Some(branches.iter().fold(0, |acc, (t, _)| acc | t)),
            Node::Typed(typed) => (typed.types != ALL).then_some(typed.types),
        }
    }

    fn typed(&mut self, obj: &Map<String, Value>, at: &str) -> Result<Typed, String> {
        let mut typed = Typed::unconstrained();
        let number = |key: &str| -> Result<Option<Number>, String> {
            match obj.get(key) {
                None => Ok(None),
                Some(Value::Number(n)) => Ok(Some(n.clone())),
                Some(_) => Err(format!("{at}/{key}: not a number")),
            }
        };
        let count = |key: &str| -> Result<Option<u64>, String> {
            match obj.get(key) {
                None => Ok(None),
                Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("{at}/{key}: not a count")),
            }
        };
        for key in obj.keys().map(String::as_str).filter(|k| !ignorable(k)) {
            match key {
                "type"
                | "enum"
                | "const"
                | "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "minLength"
                | "maxLength"
                | "pattern"
                | "format"
                | "items"
                | "minItems"
                | "maxItems"
                | "properties"
                | "required"
                | "additionalProperties"
                | "unevaluatedProperties" => {}
                other => return Err(format!("{at}: the keyword `{other}` is not in the plan")),
            }
        }
        if let Some(types) = obj.get("type") {
            typed.types = type_bits(types).ok_or_else(|| format!("{at}/type: not a JSON type"))?;
        }
        let mut allowed: Option<Vec<Value>> = None;
        if let Some(values) = obj.get("enum") {
            allowed = Some(values.as_array().ok_or_else(|| format!("{at}/enum: not an array"))?.clone());
        }
        if let Some(value) = obj.get("const") {
            // Both present: only values in both pass.
            allowed = Some(match allowed {
                Some(list) => list.into_iter().filter(|v| v == value).collect(),
                None => vec![value.clone()],
            });
        }
        if let Some(list) = &allowed
            && list.iter().any(|v| v.is_array() || v.is_object())
        {
            return Err(format!("{at}: enum or const of arrays or objects"));
        }
        typed.allowed = allowed;
        typed.minimum = number("minimum")?;
        typed.maximum = number("maximum")?;
        typed.exclusive_minimum = number("exclusiveMinimum")?;
        typed.exclusive_maximum = number("exclusiveMaximum")?;
        typed.min_length = count("minLength")?;
        typed.max_length = count("maxLength")?;
        typed.min_items = count("minItems")?;
        typed.max_items = count("maxItems")?;
        let mut leaf = Map::new();
        for key in ["pattern", "format"] {
            if let Some(v) = obj.get(key) {
                leaf.insert(key.to_owned(), v.clone());
            }
        }
        if !leaf.is_empty() {
            typed.leaf =
                Some(crate::contract::validate::compile(&Value::Object(leaf)).map_err(|e| format!("{at}: {e}"))?);
        }
        if let Some(items) = obj.get("items") {
            typed.items = self.node(items, &format!("{at}/items"))?;
        }
        let required: Vec<&str> = match obj.get("required") {
            None => Vec::new(),
            Some(Value::Array(keys)) => keys
                .iter()
                .map(|k| k.as_str().ok_or_else(|| format!("{at}/required: not a string")))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("{at}/required: not an array")),
        };
        let mut unique = required.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() > 64 {
            return Err(format!("{at}: more than 64 required keys"));
        }
        let bit = |name: &str| unique.iter().position(|k| *k == name).and_then(|i| u32::try_from(i).ok());
        if let Some(props) = obj.get("properties") {
            let props = props.as_object().ok_or_else(|| format!("{at}/properties: not an object"))?;
            for (name, sub) in props {
                let id = self
                    .node(sub, &format!("{at}/properties/{}", crate::contract::schema::escape_pointer_token(name)))?;
                typed.properties.push((name.as_str().into(), id, bit(name)));
            }
        }
        for (i, name) in unique.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            typed.required_mask |= 1u64 << i;
            if !typed.properties.iter().any(|(p, _, _)| &**p == *name) {
                typed.required_extra.push(((*name).into(), i));
            }
        }
        let extra = |this: &mut Self, key: &str| -> Result<Option<Extra>, String> {
            Ok(match obj.get(key) {
                None => None,
                Some(Value::Bool(true)) => Some(Extra::Any),
                Some(Value::Bool(false)) => Some(Extra::Never),
                Some(sub) => Some(match this.node(sub, &format!("{at}/{key}"))? {
                    ANY => Extra::Any,
                    NEVER => Extra::Never,
                    id => Extra::Node(id),
                }),
            })
        };
        // Without in-place applicators, `unevaluatedProperties` sees exactly the keys
        // `additionalProperties` sees; when both are set, a key must pass both, which
        // the plan can say only when they agree or one of them accepts everything.
        typed.extra = match (extra(self, "additionalProperties")?, extra(self, "unevaluatedProperties")?) {
            (None, None) => Extra::Any,
            (Some(e), None | Some(Extra::Any)) | (None | Some(Extra::Any), Some(e)) => e,
            (Some(Extra::Never), Some(_)) | (Some(_), Some(Extra::Never)) => Extra::Never,
            (Some(a), Some(b)) if a == b => a,
            _ => return Err(format!("{at}: different additionalProperties and unevaluatedProperties")),
        };
        Ok(typed)
    }
}

/// The canonical form writes a `type` array as `anyOf` with one single-`type` branch per
/// type, each holding the keywords of its type ([`crate::schema::split_type_list`]).
/// Such a node is read back as the one node it was: the keywords of the merged node are
/// those of its branches, each about the one type its branch has, so checking each only
/// on values of its type (as [`Typed`] does) is what the branches say. Returns `None`
/// unless every branch is `{"type": <one type>, <keywords of that type>…}` (annotations
/// aside), no two branches share a JSON type (an integer is a number) or a keyword, and
/// the node itself has no `type` and none of the branches' keywords.
fn type_list_of_branches(obj: &Map<String, Value>) -> Option<Map<String, Value>> {
    let Value::Array(branches) = obj.get("anyOf")? else { return None };
    if branches.len() < 2 || obj.contains_key("type") || obj.contains_key("oneOf") {
        return None;
    }
    let mut merged: Map<String, Value> =
        obj.iter().filter(|(k, _)| *k != "anyOf").map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut types = Vec::with_capacity(branches.len());
    let mut taken = 0u8;
    for branch in branches {
        let branch = branch.as_object()?;
        let name = branch.get("type")?.as_str()?;
        let bits = type_bits(&Value::String(name.to_owned()))?;
        let wide = if bits & (INTEGER | NUMBER) != 0 { bits | INTEGER | NUMBER } else { bits };
        if wide & taken != 0 {
            return None;
        }
        taken |= wide;
        let own = crate::contract::schema::keywords_of_type(name);
        for (key, value) in branch.iter().filter(|(k, _)| *k != "type" && !ANNOTATIONS.contains(&k.as_str())) {
            let format_here = key == "format" && matches!(name, "string" | "integer" | "number");
            if !(own.contains(&key.as_str()) || format_here) || merged.contains_key(key) {
                return None;
            }
            merged.insert(key.clone(), value.clone());
        }
        types.push(Value::String(name.to_owned()));
    }
    merged.insert("type".to_owned(), Value::Array(types));
    Some(merged)
}

fn type_bits(types: &Value) -> Option<u8> {
    let one = |t: &Value| {
        Some(match t.as_str()? {
            "null" => NULL,
            "boolean" => BOOL,
            "integer" => INTEGER,
            "number" => NUMBER | INTEGER,
            "string" => STRING,
            "array" => ARRAY,
            "object" => OBJECT,
            _ => return None,
        })
    };
    match types {
        Value::Array(list) => list.iter().try_fold(0, |acc, t| Some(acc | one(t)?)),
        t => one(t),
    }
}
