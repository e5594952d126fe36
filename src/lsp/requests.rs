//! The request handlers: position in, the library's answer out.

use super::document::Analysis;
use super::navigate::{self, Symbol};
use super::text::{offset, range};
use super::{Server, complete, convert};
use crate::check::Config;
use lsp_server::ErrorCode;
use lsp_types as lt;
use std::collections::HashMap;
use std::rc::Rc;

type Failure = (ErrorCode, String);

impl Server {
    /// The document's analysis and checker configuration.
    fn doc(&mut self, uri: &lt::Url) -> Option<(Rc<Analysis>, Rc<Config>)> {
        let doc = self.docs.get_mut(uri)?;
        let a = doc.analysis(&mut self.projects);
        let (_, config) = self.projects.config_for(&super::document::uri_path(uri));
        Some((a, config))
    }

    fn hit(
        &mut self,
        p: &lt::TextDocumentPositionParams,
    ) -> Option<(Rc<Analysis>, Rc<Config>, navigate::Hit)> {
        let (a, config) = self.doc(&p.text_document.uri)?;
        let at = offset(&a.src, p.position, self.encoding);
        let hit = navigate::at(&a, &config, at)?;
        Some((a, config, hit))
    }

    pub(super) fn hover(&mut self, p: lt::TextDocumentPositionParams) -> Option<lt::Hover> {
        let (a, config, hit) = self.hit(&p)?;
        let value = navigate::hover(&a, &config, &hit)?;
        Some(lt::Hover {
            contents: lt::HoverContents::Markup(lt::MarkupContent { kind: lt::MarkupKind::Markdown, value }),
            range: Some(range(&a.src, hit.span, self.encoding)),
        })
    }

    pub(super) fn definition(
        &mut self,
        p: lt::TextDocumentPositionParams,
    ) -> Option<lt::GotoDefinitionResponse> {
        let (a, _, hit) = self.hit(&p)?;
        let uri = p.text_document.uri;
        if let Symbol::Schema(name) = &hit.symbol {
            let file = a.project.join("schemas").join(format!("{name}.json"));
            let target = lt::Url::from_file_path(&file).ok().filter(|_| file.is_file())?;
            let zero = lt::Range::default();
            return Some(lt::GotoDefinitionResponse::Scalar(lt::Location { uri: target, range: zero }));
        }
        let span = navigate::definition(a.wf.as_ref()?, &hit.symbol)?;
        Some(lt::GotoDefinitionResponse::Scalar(lt::Location {
            uri,
            range: range(&a.src, span, self.encoding),
        }))
    }

    pub(super) fn references(
        &mut self,
        p: lt::TextDocumentPositionParams,
        include_declaration: bool,
    ) -> Option<Vec<lt::Location>> {
        let (a, config, hit) = self.hit(&p)?;
        let uri = p.text_document.uri;
        let mut spans = navigate::references(&a, &config, &hit.symbol);
        if !include_declaration
            && let Some(def) = a.wf.as_ref().and_then(|wf| navigate::definition(wf, &hit.symbol))
        {
            spans.retain(|s| *s != def);
        }
        Some(
            spans
                .into_iter()
                .map(|s| lt::Location { uri: uri.clone(), range: range(&a.src, s, self.encoding) })
                .collect(),
        )
    }

    pub(super) fn prepare_rename(
        &mut self,
        p: lt::TextDocumentPositionParams,
    ) -> Option<lt::PrepareRenameResponse> {
        let (a, _, hit) = self.hit(&p)?;
        renamable(&hit.symbol)
            .then(|| lt::PrepareRenameResponse::Range(range(&a.src, hit.span, self.encoding)))
    }

    pub(super) fn rename(&mut self, p: lt::RenameParams) -> Result<Option<lt::WorkspaceEdit>, Failure> {
        let Some((a, config, hit)) = self.hit(&p.text_document_position) else { return Ok(None) };
        if !renamable(&hit.symbol) {
            return Err((
                ErrorCode::InvalidRequest,
                "only a step id, a capture, a param or a loop variable can be renamed".into(),
            ));
        }
        let valid = match hit.symbol {
            Symbol::Step(_) => {
                !p.new_name.is_empty()
                    && !p.new_name.contains(|c: char| c.is_whitespace() || c == '[' || c == ']')
            }
            _ => {
                crate::ir::lower::is_identifier(&p.new_name)
                    && !crate::ir::RESERVED_NAMES.contains(&p.new_name.as_str())
            }
        };
        if !valid {
            return Err((ErrorCode::InvalidParams, format!("`{}` is not a valid name here", p.new_name)));
        }
        let uri = p.text_document_position.text_document.uri;
        let edits = navigate::references(&a, &config, &hit.symbol)
            .into_iter()
            .map(|s| lt::TextEdit {
                range: range(&a.src, s, self.encoding),
                new_text: convert::quoted_like(a.src.slice(s), &p.new_name),
            })
            .collect();
        let mut changes = HashMap::new();
        changes.insert(uri, edits);
        Ok(Some(lt::WorkspaceEdit { changes: Some(changes), ..Default::default() }))
    }

    #[allow(deprecated)] // `DocumentSymbol::deprecated` must still be written.
    pub(super) fn symbols(&mut self, uri: &lt::Url) -> Option<lt::DocumentSymbolResponse> {
        let (a, _) = self.doc(uri)?;
        let wf = a.wf.as_ref()?;
        let symbols = wf
            .steps
            .iter()
            .map(|s| lt::DocumentSymbol {
                name: s.id.value.to_string(),
                detail: s.call.as_ref().map(|c| c.value.to_string()),
                kind: lt::SymbolKind::FUNCTION,
                tags: None,
                deprecated: None,
                range: range(&a.src, s.span, self.encoding),
                selection_range: range(&a.src, s.id.span, self.encoding),
                children: None,
            })
            .collect();
        Some(lt::DocumentSymbolResponse::Nested(symbols))
    }

    pub(super) fn completion(&mut self, p: lt::TextDocumentPositionParams) -> Option<lt::CompletionResponse> {
        let uri = &p.text_document.uri;
        let (current, config) = self.doc(uri)?;
        let doc = self.docs.get(uri)?;
        let at = offset(&current.src, p.position, self.encoding);
        // Names come from the latest analysis that had a workflow.
        let a = if current.wf.is_some() { current.clone() } else { doc.last_good.clone()? };
        let items = complete::complete(&doc.text, at, &a, &config);
        Some(lt::CompletionResponse::Array(items))
    }

    pub(super) fn code_actions(
        &mut self,
        uri: &lt::Url,
        within: lt::Range,
    ) -> Option<Vec<lt::CodeActionOrCommand>> {
        let (a, _) = self.doc(uri)?;
        Some(convert::code_actions(uri, &a, within, self.encoding))
    }
}

fn renamable(s: &Symbol) -> bool {
    matches!(s, Symbol::Step(_) | Symbol::Capture(_) | Symbol::Param(_) | Symbol::LoopVar(_))
}
