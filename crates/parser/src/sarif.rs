//! SARIF 2.1.0 output for GitHub code scanning (`upload-sarif` / the code-scanning API).
//!
//! One run, tool `ci-medic`, one rule per distinct rule id (the tool's code when there is one,
//! else the bug type), one result per report with a repo-relative `artifactLocation.uri`, a
//! `region` and the report's confidence as `properties`. Pure: builds a JSON value, never writes.

use serde_json::{Value, json};

use crate::BugReport;

/// The rule id GitHub groups alerts by: `tool/CODE` when the tool printed a code, else
/// `ci-medic/TYPE`.
fn rule_id(r: &BugReport) -> String {
    match (&r.tool, &r.rule) {
        (Some(tool), Some(rule)) => format!("{}/{}", tool.replace(' ', "-"), rule),
        (None, Some(rule)) => rule.clone(),
        _ => format!("ci-medic/{}", r.error_type.as_str()),
    }
}

/// Builds a SARIF 2.1.0 log from the reports.
pub fn to_sarif(reports: &[BugReport]) -> Value {
    let mut rule_ids: Vec<String> = Vec::new();
    let mut rules: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for r in reports {
        let id = rule_id(r);
        let index = match rule_ids.iter().position(|x| *x == id) {
            Some(i) => i,
            None => {
                rule_ids.push(id.clone());
                rules.push(json!({
                    "id": id,
                    "name": id.replace(['/', '-', ':'], "_"),
                    "shortDescription": { "text": format!("{} ({})", id, r.error_type) },
                    "properties": { "tags": [r.error_type.as_str()] },
                }));
                rule_ids.len() - 1
            }
        };
        let mut region = json!({ "startLine": r.line_number.max(1) });
        if let Some(col) = r.column {
            region["startColumn"] = json!(col.max(1));
        }
        let message = if r.message.trim().is_empty() {
            r.error_type.as_str().to_string()
        } else {
            r.message.clone()
        };
        let level = if r.error_type == crate::BugType::Linting {
            "warning"
        } else {
            "error"
        };
        let mut props = json!({
            "errorType": r.error_type.as_str(),
            "confidence": r.confidence_score,
        });
        if let Some(t) = &r.test_name {
            props["testName"] = json!(t);
        }
        results.push(json!({
            "ruleId": id,
            "ruleIndex": index,
            "level": level,
            "message": { "text": message },
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": { "uri": r.file_path, "uriBaseId": "%SRCROOT%" },
                    "region": region,
                }
            }],
            "properties": props,
        }));
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "ci-medic",
                    "informationUri": "https://github.com/ci-medic/ci-medic",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "results": results,
        }]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ParseOptions, parse_str};

    #[test]
    fn sarif_shape() {
        let r = parse_str(
            "app.py:1:8: F401 [*] `os` imported but unused\nsrc/a.ts(3,7): error TS2322: bad\n",
            &ParseOptions::default(),
        );
        let s = to_sarif(&r);
        assert_eq!(s["version"], "2.1.0");
        let results = s["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "src/a.ts"
        );
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["region"]["startColumn"],
            7
        );
        assert_eq!(
            s["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(results[1]["ruleIndex"], 1);
    }
}
