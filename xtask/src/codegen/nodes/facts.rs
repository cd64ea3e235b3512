//! The facts about an arena the runtime uses to go fast: the constants properties pin
//! (`discriminators`), whether a value can fit a node, the static view of a node, and how the
//! branches of a union are told apart.

use serde_json::Value;

use super::{Additional, Arena, MAX_REF_CHAIN, Node, OBJECT_BIT, UNION_DEPTH, Union};

impl Arena {
    fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// The constant a schema pins its value to, following references.
    pub(crate) fn constant_of(&self, id: u32, depth: u32) -> Option<&Value> {
        let node = self.node(id)?;
        match (&node.constant, node.reference) {
            (Some(k), _) => Some(k),
            (None, Some(target)) if depth < MAX_REF_CHAIN => self.constant_of(target, depth + 1),
            _ => None,
        }
    }

    /// The properties of node `id` that pin a constant, with the constant and whether the
    /// property is required.
    pub(crate) fn discriminators(&self, id: u32) -> Vec<(&str, &Value, bool)> {
        let Some(node) = self.node(id) else {
            return Vec::new();
        };
        node.properties
            .iter()
            .filter_map(|(name, prop)| {
                let constant = self.constant_of(*prop, 0)?;
                Some((name.as_str(), constant, node.required.contains(name)))
            })
            .collect()
    }

    /// Whether the runtime's `plausible` (`tables/validate.rs`) says yes for every object (with
    /// `tag`: for every object whose property `tag.0` is the string `tag.1`). It walks the same
    /// way: the node admits objects, pins no constant and no property constant (but the tag),
    /// and so do its `$ref` target, its `allOf` parts and one of its `anyOf` branches. Deep or
    /// cyclic schemas answer no (the runtime then asks `plausible`).
    pub(crate) fn plausible_for(&self, id: u32, tag: Option<(&str, &str)>, depth: u32) -> bool {
        let Some(node) = self.node(id) else {
            return false;
        };
        if depth > UNION_DEPTH
            || node.never
            || (node.types != 0 && node.types & OBJECT_BIT == 0)
            || node.constant.is_some()
        {
            return false;
        }
        let discriminators_hold = self.discriminators(id).iter().all(|(name, constant, _)| {
            tag.is_some_and(|(key, value)| *name == key && constant.as_str() == Some(value))
        });
        discriminators_hold
            && node
                .reference
                .is_none_or(|target| self.plausible_for(target, tag, depth + 1))
            && node
                .all_of
                .iter()
                .all(|&part| self.plausible_for(part, tag, depth + 1))
            && (node.any_of.is_empty()
                || node
                    .any_of
                    .iter()
                    .any(|&branch| self.plausible_for(branch, tag, depth + 1)))
    }

    /// What the runtime's shaping (`Shaper::collect_object` in `tables/shape.rs`) gathers for
    /// any object from node `id`, when that does not depend on the object: the object schemas
    /// it describes the object with, in order, and whether some schema leaves it open. Only
    /// `anyOf` makes it depend on the object (through plausibility), unless every branch is
    /// plausible for every object. `None` when it depends, or nests deeper than
    /// [`UNION_DEPTH`].
    pub(crate) fn static_view(&self, id: u32, depth: u32) -> Option<(Vec<u32>, bool)> {
        let node = self.node(id)?;
        if depth > UNION_DEPTH {
            return None;
        }
        let mut described = Vec::new();
        let mut open = false;
        if node.never || (node.types != 0 && node.types & OBJECT_BIT == 0) {
            return Some((described, open));
        }
        let mut parts: Vec<u32> = node.reference.into_iter().collect();
        parts.extend(&node.all_of);
        if !node.any_of.is_empty() {
            if !node.any_of.iter().all(|&b| self.plausible_for(b, None, 0)) {
                return None;
            }
            parts.extend(&node.any_of);
        }
        for part in parts {
            let (more, more_open) = self.static_view(part, depth + 1)?;
            described.extend(more);
            open |= more_open;
        }
        let composite =
            node.reference.is_some() || !node.all_of.is_empty() || !node.any_of.is_empty();
        match node.additional {
            Additional::Any | Additional::Schema(_) => open = true,
            Additional::Absent | Additional::Never if node.has_properties => described.push(id),
            Additional::Absent | Additional::Never if !composite => open = true,
            Additional::Absent | Additional::Never => {}
        }
        Some((described, open))
    }

    /// The nodes checked together with `id` on the same value: `id`, what it references and
    /// its `allOf` parts, recursively (up to [`UNION_DEPTH`] levels).
    fn closure(&self, id: u32, depth: u32, out: &mut Vec<u32>) {
        if depth > UNION_DEPTH || out.contains(&id) {
            return;
        }
        out.push(id);
        if let Some(node) = self.node(id) {
            if let Some(target) = node.reference {
                self.closure(target, depth + 1, out);
            }
            for &part in &node.all_of {
                self.closure(part, depth + 1, out);
            }
        }
    }

    /// The string constant some node of branch `id`'s closure pins property `key` to. Checking
    /// a value whose `key` is another string fails there, and the branch is not plausible.
    fn tag_of(&self, id: u32, key: &str) -> Option<&str> {
        let mut closure = Vec::new();
        self.closure(id, 0, &mut closure);
        closure.iter().find_map(|&n| {
            let node = self.node(n)?;
            let (_, prop) = node.properties.iter().find(|(name, _)| name == key)?;
            self.constant_of(*prop, 0)?.as_str()
        })
    }

    /// The properties some node of branch `id`'s closure requires: checking a value without
    /// one of them fails there.
    fn required_of(&self, id: u32) -> Vec<&str> {
        let mut closure = Vec::new();
        self.closure(id, 0, &mut closure);
        let mut names: Vec<&str> = closure
            .iter()
            .filter_map(|&n| self.node(n))
            .flat_map(|n| n.required.iter().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// How the branches of node `id`'s `anyOf` are told apart: by a property every branch pins
    /// to a different string (preferred: it also helps shaping), else by a property each branch
    /// requires and no other branch does.
    pub(crate) fn union(&self, id: u32) -> Option<Union> {
        let branches = &self.node(id)?.any_of;
        if branches.len() < 2 {
            return None;
        }
        // Candidate tag keys: the properties with a string constant in the first branch.
        let mut first = Vec::new();
        self.closure(branches[0], 0, &mut first);
        let mut keys: Vec<&str> = first
            .iter()
            .filter_map(|&n| self.node(n))
            .flat_map(|n| n.properties.iter().map(|(name, _)| name.as_str()))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        for key in keys {
            let tags: Option<Vec<&str>> = branches.iter().map(|&b| self.tag_of(b, key)).collect();
            if let Some(tags) = tags {
                let mut distinct = tags.clone();
                distinct.sort_unstable();
                distinct.dedup();
                if distinct.len() == tags.len() {
                    let sure = branches
                        .iter()
                        .zip(&tags)
                        .all(|(&b, tag)| self.plausible_for(b, Some((key, tag)), 0));
                    return Some(Union::Tag {
                        key: key.to_owned(),
                        tags: tags.into_iter().map(str::to_owned).collect(),
                        sure,
                    });
                }
            }
        }
        let required: Vec<Vec<&str>> = branches.iter().map(|&b| self.required_of(b)).collect();
        let mut keys = Vec::with_capacity(branches.len());
        for (i, own) in required.iter().enumerate() {
            let distinct = own.iter().find(|name| {
                required
                    .iter()
                    .enumerate()
                    .all(|(j, other)| j == i || !other.contains(name))
            })?;
            keys.push((*distinct).to_owned());
        }
        Some(Union::Required { keys })
    }
}
