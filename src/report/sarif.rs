//! The `sarif` format: a SARIF 2.1.0 log with one run, as GitHub code scanning
//! uploads it (`github/codeql-action/upload-sarif`).

use super::{FileReport, line_cols, portable_path};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{SourceFile, Span};
use serde::Serialize;

const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

pub(super) fn render(reports: &[FileReport<'_>]) -> String {
    let results = reports
        .iter()
        .flat_map(|report| {
            let uri = artifact_uri(&report.source.path);
            report.diagnostics.iter().map(move |d| result(report.source, &uri, d))
        })
        .collect();
    let driver = Driver {
        name: env!("CARGO_PKG_NAME"),
        version: env!("CARGO_PKG_VERSION"),
        information_uri: [env!("CARGO_PKG_HOMEPAGE"), env!("CARGO_PKG_REPOSITORY")]
            .into_iter()
            .find(|uri| !uri.is_empty()),
        rules: rules(),
    };
    // A run that could not read an input did not succeed: an upload of it
    // must not close the alerts of the files it skipped.
    let execution_successful = !reports.iter().flat_map(|r| r.diagnostics).any(|d| d.code == Code::IoError);
    let run = Run {
        tool: Tool { driver },
        invocations: vec![Invocation { execution_successful }],
        column_kind: "unicodeCodePoints",
        results,
    };
    let log = Log { schema: SCHEMA, version: "2.1.0", runs: vec![run] };
    let mut out = serde_json::to_string_pretty(&log).expect("plain data always serializes");
    out.push('\n');
    out
}

/// One rule per diagnostic code, in the order of [`Code::ALL`].
fn rules() -> Vec<Rule> {
    Code::ALL
        .iter()
        .map(|&code| {
            let doc = crate::check::rules::doc(code);
            Rule {
                id: code.as_str(),
                short_description: Text { text: code.summary().to_owned() },
                full_description: Text { text: crate::check::rules::description(code) },
                help: Help { text: doc.to_owned(), markdown: doc.to_owned() },
                help_uri: help_uri(code),
                default_configuration: Configuration { level: code.severity().as_str() },
            }
        })
        .collect()
}

/// One diagnostic of the file `source` (at `uri`) as a result: its
/// message with the help and links to its related locations, and its fix.
fn result(source: &SourceFile, uri: &str, d: &Diagnostic) -> SarifResult {
    let location = |span, message: Option<&str>, id| Location {
        id,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri: uri.to_owned() },
            region: Region::new(source, span),
        },
        message: message.map(|m| Text { text: m.to_owned() }),
    };
    let mut text = match &d.help {
        Some(help) => format!("{} (help: {help})", d.message),
        None => d.message.clone(),
    };
    // Related locations linked from the message, as viewers render them.
    for (i, label) in d.labels.iter().enumerate() {
        let escaped = label.message.replace('[', "\\[").replace(']', "\\]");
        text.push_str(&format!(" [{escaped}]({})", i + 1));
    }
    SarifResult {
        rule_id: d.code.as_str(),
        rule_index: Code::ALL.iter().position(|&c| c == d.code).expect("Code::ALL lists every code"),
        level: d.severity.as_str(),
        message: Text { text },
        locations: vec![location(d.span, None, None)],
        related_locations: (d.labels.iter().enumerate())
            .map(|(i, label)| location(label.span, Some(&label.message), Some(i + 1)))
            .collect(),
        fixes: (d.fix.iter())
            .map(|fix| SarifFix {
                description: Text { text: format!("replace with `{}`", fix.replacement) },
                artifact_changes: vec![ArtifactChange {
                    artifact_location: ArtifactLocation { uri: uri.to_owned() },
                    replacements: vec![Replacement {
                        deleted_region: Region::new(source, fix.span),
                        inserted_content: Text { text: fix.replacement.clone() },
                    }],
                }],
            })
            .collect(),
    }
}

/// The path as a URI reference: relative paths stay relative (GitHub resolves
/// them against the repository root); absolute ones become `file:` URIs.
fn artifact_uri(path: &str) -> String {
    let path = portable_path(path);
    let bytes = path.as_bytes();
    let (mut uri, rest) = if path.starts_with('/') {
        (String::from("file://"), &path[..])
    } else if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        (format!("file:///{}", &path[..2]), &path[2..])
    } else {
        (String::new(), &path[..])
    };
    for b in rest.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

#[derive(Serialize)]
struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    tool: Tool,
    invocations: Vec<Invocation>,
    column_kind: &'static str,
    results: Vec<SarifResult>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

/// The rule's section of docs/checks.md, when the package names its repository.
fn help_uri(code: Code) -> Option<String> {
    let repo = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    (!repo.is_empty())
        .then(|| format!("{repo}/blob/main/docs/checks.md#{}", crate::check::rules::anchor(code)))
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'static str>,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    short_description: Text,
    full_description: Text,
    help: Help,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    /// The edit `check --fix` would make (SARIF §3.55).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix {
    description: Text,
    artifact_changes: Vec<ArtifactChange>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

/// 1-based lines and character columns (`columnKind` says so); the end is exclusive.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    end_line: usize,
    end_column: usize,
}

impl Region {
    fn new(source: &SourceFile, span: Span) -> Region {
        let (start, end) = line_cols(source, span);
        Region {
            start_line: start.line,
            start_column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::fixture;
    use serde_json::{Value, json};

    #[test]
    fn results_point_at_rules_and_regions() {
        let (source, diagnostics) = fixture();
        let out = render(&[FileReport { source: &source, diagnostics: &diagnostics }]);
        let log: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(log["version"], "2.1.0");
        assert_eq!(log["$schema"], SCHEMA);
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "savant-think");
        assert_eq!(run["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        assert_eq!(rules.len(), Code::ALL.len());
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 3);
        for result in results {
            let rule = &rules[result["ruleIndex"].as_u64().unwrap() as usize];
            assert_eq!(rule["id"], result["ruleId"]);
        }
        assert_eq!(results[1]["level"], "warning");
        assert_eq!(
            results[1]["locations"][0]["physicalLocation"]["region"],
            json!({"startLine": 10, "startColumn": 17, "endLine": 11, "endColumn": 9})
        );
        assert!(results[2].get("relatedLocations").is_none());
        let rule = &rules[Code::ALL.iter().position(|&c| c == Code::UnusedCapture).unwrap()];
        assert_eq!(rule["id"], "UNUSED_CAPTURE");
        assert_eq!(rule["shortDescription"], json!({ "text": Code::UnusedCapture.summary() }));
        assert_eq!(rule["defaultConfiguration"], json!({ "level": "warning" }));
        assert!(rule["fullDescription"]["text"].as_str().unwrap().starts_with("reports a `capture_as`"));
        assert!(rule["help"]["markdown"].as_str().unwrap().starts_with("## UNUSED_CAPTURE (warning)"));
        assert_eq!(run["invocations"], json!([{ "executionSuccessful": true }]));
    }

    #[test]
    fn prints_a_result_with_its_related_locations() {
        let (source, diagnostics) = fixture();
        let out = render(&[FileReport { source: &source, diagnostics: &diagnostics[..1] }]);
        let results = &out[out.find("      \"results\"").unwrap()..];
        insta::assert_snapshot!(results, @r#"
                        "results": [
                          {
                            "ruleId": "UNRESOLVED_VAR",
                            "ruleIndex": 8,
                            "level": "error",
                            "message": {
                              "text": "unknown variable `mr_dta` (help: did you mean `mr_data`?) [`mr_data` is captured here](1)"
                            },
                            "locations": [
                              {
                                "physicalLocation": {
                                  "artifactLocation": {
                                    "uri": "flows/d%C3%A9mo.yaml"
                                  },
                                  "region": {
                                    "startLine": 8,
                                    "startColumn": 39,
                                    "endLine": 8,
                                    "endColumn": 45
                                  }
                                }
                              }
                            ],
                            "relatedLocations": [
                              {
                                "id": 1,
                                "physicalLocation": {
                                  "artifactLocation": {
                                    "uri": "flows/d%C3%A9mo.yaml"
                                  },
                                  "region": {
                                    "startLine": 5,
                                    "startColumn": 17,
                                    "endLine": 5,
                                    "endColumn": 24
                                  }
                                },
                                "message": {
                                  "text": "`mr_data` is captured here"
                                }
                              }
                            ],
                            "fixes": [
                              {
                                "description": {
                                  "text": "replace with `mr_data`"
                                },
                                "artifactChanges": [
                                  {
                                    "artifactLocation": {
                                      "uri": "flows/d%C3%A9mo.yaml"
                                    },
                                    "replacements": [
                                      {
                                        "deletedRegion": {
                                          "startLine": 8,
                                          "startColumn": 39,
                                          "endLine": 8,
                                          "endColumn": 45
                                        },
                                        "insertedContent": {
                                          "text": "mr_data"
                                        }
                                      }
                                    ]
                                  }
                                ]
                              }
                            ]
                          }
                        ]
                      }
                    ]
                  }
            "#);
    }

    #[test]
    fn uris_are_relative_and_percent_encoded() {
        assert_eq!(artifact_uri("./flows/my flow.yaml"), "flows/my%20flow.yaml");
        assert_eq!(artifact_uri("a\\b:c.yml"), "a/b%3Ac.yml");
        assert_eq!(artifact_uri("/tmp/x.yaml"), "file:///tmp/x.yaml");
        assert_eq!(artifact_uri("C:\\w\\x.yaml"), "file:///C:/w/x.yaml");
    }
}
