//! speedscope's own file format (its `file-format-schema.json`), written
//! from collapsed stacks (`proc;M:F/A;... weight`, as `profile --folded`
//! writes them): one sampled profile per process, each call path a sample
//! weighted by its self time or its sample count. Frames are shared by all
//! profiles.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde_json::{json, Value};

/// The profiles of `folded`'s processes (the first frame of each line), in
/// the order of their first line; `unit` is speedscope's name of what the
/// weights count (`microseconds`, `none`).
pub fn from_folded(folded: &str, name: &str, unit: &str) -> Result<String, String> {
    let mut frames: Vec<Value> = Vec::new();
    let mut frame_ids: FxHashMap<&str, usize> = FxHashMap::default();
    let mut order: Vec<&str> = Vec::new();
    let mut profiles: BTreeMap<usize, (Vec<Vec<usize>>, Vec<u64>)> = BTreeMap::new();
    for (i, line) in folded.lines().enumerate() {
        let (stack, weight) = line
            .rsplit_once(' ')
            .ok_or_else(|| format!("speedscope: line {} has no weight", i + 1))?;
        let weight: u64 = weight
            .parse()
            .map_err(|_| format!("speedscope: line {}: weight {weight:?}", i + 1))?;
        let mut parts = stack.split(';');
        let process = parts.next().unwrap_or_default();
        let at = match order.iter().position(|p| *p == process) {
            Some(k) => k,
            None => {
                order.push(process);
                order.len() - 1
            }
        };
        let path: Vec<usize> = parts
            .map(|f| {
                *frame_ids.entry(f).or_insert_with(|| {
                    frames.push(json!({ "name": f }));
                    frames.len() - 1
                })
            })
            .collect();
        let (samples, weights) = profiles.entry(at).or_default();
        samples.push(path);
        weights.push(weight);
    }
    let profiles: Vec<Value> = profiles
        .into_iter()
        .map(|(at, (samples, weights))| {
            let total: u64 = weights.iter().sum();
            json!({
                "type": "sampled",
                "name": order[at],
                "unit": unit,
                "startValue": 0,
                "endValue": total,
                "samples": samples,
                "weights": weights,
            })
        })
        .collect();
    let file = json!({
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": { "frames": frames },
        "profiles": profiles,
        "name": name,
        "activeProfileIndex": 0,
        "exporter": concat!("dyntrace-analyze ", env!("CARGO_PKG_VERSION")),
    });
    serde_json::to_string(&file).map_err(|e| format!("speedscope: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_profile_per_process_and_shared_frames() {
        let folded = "a (<0.1.0>);m:f/0 5\na (<0.1.0>);m:f/0;m:g/1 2\n<0.2.0>;m:g/1 7\n";
        let v: Value =
            serde_json::from_str(&from_folded(folded, "t", "microseconds").unwrap()).unwrap();
        assert_eq!(
            v["shared"]["frames"],
            json!([{"name": "m:f/0"}, {"name": "m:g/1"}])
        );
        let p = &v["profiles"];
        assert_eq!(p[0]["name"], "a (<0.1.0>)");
        assert_eq!(p[0]["samples"], json!([[0], [0, 1]]));
        assert_eq!(p[0]["weights"], json!([5, 2]));
        assert_eq!(p[0]["endValue"], 7);
        assert_eq!(p[1]["name"], "<0.2.0>");
        assert_eq!(p[1]["samples"], json!([[1]]));
        assert!(from_folded("no weight here\n", "t", "none").is_err());
    }
}
