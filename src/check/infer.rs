//! Static type inference for expressions. Reports `TYPE_MISMATCH`, and
//! `UNRESOLVED_VAR` for a field an object's schema does not declare (read
//! at any depth, found only by knowing the type);
//! unresolved names and unknown functions are typed `any` here (their own
//! checks report them), so one mistake is never two errors.

use crate::check::Cx;
use crate::check::scope::{self, Binding};
use crate::diagnostic::{Code, Diagnostic, suggest};
use crate::ir::ast::{BinOp, Expr, ExprKind, UnaryOp};
use crate::ir::{ExprSite, ScalarLoc, Type, builtins};

/// One expression being inferred: where it is and where problems go.
pub struct Infer<'c, 'a> {
    pub cx: &'c Cx<'a>,
    pub step: usize,
    pub site: ExprSite,
    pub loc: &'c ScalarLoc,
    pub text: &'c str,
    /// The foreach item type, for the loop variable.
    pub loop_item: Type,
    /// `None` to infer silently.
    pub out: Option<&'c mut Vec<Diagnostic>>,
}

impl Infer<'_, '_> {
    fn mismatch(&mut self, e: &Expr, message: String, help: Option<String>) {
        let span = self.cx.file_span(self.loc, self.text, e.span);
        if let Some(out) = self.out.as_deref_mut() {
            out.push(Diagnostic::new(Code::TypeMismatch, span, message).with_help_opt(help));
        }
    }

    pub fn infer(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Null => Type::Null,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Number(_) => Type::Number,
            ExprKind::Str(_) => Type::String,
            ExprKind::Array(items) => {
                let mut item = Type::Null;
                for i in items {
                    let t = self.infer(i);
                    item = item.join(&t);
                }
                Type::array(if items.is_empty() { Type::Any } else { item })
            }
            ExprKind::Var(name) => match scope::resolve(self.cx, self.step, self.site, name) {
                Some(b) => scope::binding_type(self.cx, b, &self.loop_item),
                None => Type::Any,
            },
            ExprKind::Field { base, name, .. } => self.field(e, base, name),
            // `x['key']` is `x.key` with a key that need not be an identifier:
            // checked the same way.
            ExprKind::Index { base, index, .. } if matches!(&index.kind, ExprKind::Str(_)) => {
                let ExprKind::Str(key) = &index.kind else { unreachable!("matched above") };
                self.field(e, base, key)
            }
            ExprKind::Index { base, index, .. } => {
                let bt = self.infer(base);
                let it = self.infer(index);
                self.index(e, &bt, index, &it)
            }
            ExprKind::Call { name, args, .. } => {
                let types: Vec<Type> = args.iter().map(|a| self.infer(a)).collect();
                self.call(e, name, args, &types)
            }
            ExprKind::Unary { op, expr } => {
                let t = self.infer(expr);
                let (want, result) = match op {
                    UnaryOp::Not => (Type::Bool, Type::Bool),
                    UnaryOp::Neg => (Type::Number, Type::Number),
                };
                if !t.is_any() && t != want {
                    let sym = if *op == UnaryOp::Not { "!" } else { "-" };
                    let help = (*op == UnaryOp::Not)
                        .then(|| "test for null with `x == null` or `exists(x)`".to_owned());
                    self.mismatch(
                        expr,
                        format!("`{sym}` needs {}, found {}", want.article(), t.article()),
                        help,
                    );
                }
                result
            }
            ExprKind::Binary { op, lhs, rhs, .. } => {
                let l = self.infer(lhs);
                let r = self.infer(rhs);
                self.binary(e, *op, lhs, rhs, &l, &r)
            }
            ExprKind::Ternary { cond, then, otherwise } => {
                let c = self.infer(cond);
                self.expect_bool(cond, &c, "the condition of `? :`");
                let a = self.infer(then);
                let b = self.infer(otherwise);
                a.join(&b)
            }
        }
    }

    pub fn expect_bool(&mut self, e: &Expr, t: &Type, what: &str) {
        if !t.is_any() && *t != Type::Bool {
            let help = match t {
                Type::Array(_) | Type::String => Some("test emptiness with `len(x) > 0`".to_owned()),
                Type::Number => Some("compare explicitly, e.g. `x > 0`".to_owned()),
                Type::Null | Type::Object(_) => Some("compare explicitly, e.g. `x != null`".to_owned()),
                _ => None,
            };
            self.mismatch(e, format!("{what} must be a bool, found {}", t.article()), help);
        }
    }

    fn field(&mut self, e: &Expr, base: &Expr, name: &str) -> Type {
        // Fields of built-in roots are checked by UNRESOLVED_VAR.
        if let ExprKind::Var(root) = &base.kind {
            match scope::resolve(self.cx, self.step, self.site, root) {
                Some(Binding::Steps) => return steps_status_type(),
                // A field a tool's result does not have: UNRESOLVED_VAR reports it.
                Some(Binding::Capture(i)) if self.cx.capture_tool[i].is_some() => {
                    if let Type::Object(o) = &*self.cx.capture_types[i] {
                        return o.fields.get(name).cloned().unwrap_or(Type::Any);
                    }
                }
                Some(b @ (Binding::Params | Binding::Workflow | Binding::Run | Binding::Loop)) => {
                    return scope::builtin_field_type(self.cx, b, name);
                }
                _ => {}
            }
        }
        // `steps.X.field`: UNRESOLVED_VAR reports an unknown field of a step.
        if is_step_ref(self.cx, self.step, self.site, base) {
            return if name == "status" { Type::String } else { Type::Any };
        }
        // A capture's type is read in place, not copied.
        let cx = self.cx;
        let owned;
        let bt: &Type = match &base.kind {
            ExprKind::Var(root) => match scope::resolve(cx, self.step, self.site, root) {
                Some(Binding::Capture(i)) => &cx.capture_types[i],
                _ => {
                    owned = self.infer(base);
                    &owned
                }
            },
            _ => {
                owned = self.infer(base);
                &owned
            }
        };
        match bt {
            Type::Any | Type::Null => Type::Any,
            Type::Object(o) => match o.fields.get(name) {
                Some(t) => t.clone(),
                None if o.open => Type::Any,
                None => {
                    self.undeclared(e, base, name, o);
                    Type::Any
                }
            },
            other => {
                let what = self.text.get(base.span.range()).unwrap_or("x").trim().to_owned();
                let help = if matches!(name, "length" | "size" | "count")
                    && matches!(other, Type::Array(_) | Type::String)
                {
                    Some(format!("write `len({what})` for the length"))
                } else {
                    matches!(other, Type::Array(_)).then(|| {
                        format!("index an item first (`x[0].{name}`), or loop over it with `foreach`")
                    })
                };
                self.mismatch(e, format!("cannot read field `{name}` of {}", other.article()), help);
                Type::Any
            }
        }
    }

    /// Reading a field the schema does not declare is the same mistake at
    /// any depth: `UNRESOLVED_VAR`, at the field's name, with a did-you-mean.
    fn undeclared(&mut self, e: &Expr, base: &Expr, name: &str, o: &crate::ir::ObjectType) {
        let fields = o.fields.keys().cloned().collect::<Vec<_>>().join(", ");
        let help = suggest(name, o.fields.keys().map(String::as_str)).or_else(|| {
            Some(if fields.is_empty() {
                "its schema declares no fields".to_owned()
            } else {
                format!("its fields are: {fields}")
            })
        });
        let what = self.text.get(base.span.range()).unwrap_or("the object").trim();
        let at = match &e.kind {
            ExprKind::Field { name_span, .. } => *name_span,
            _ => e.span,
        };
        let span = self.cx.file_span(self.loc, self.text, at);
        if let Some(out) = self.out.as_deref_mut() {
            let message = format!("`{what}` has no field `{name}`");
            out.push(Diagnostic::new(Code::UnresolvedVar, span, message).with_help_opt(help));
        }
    }

    fn index(&mut self, e: &Expr, bt: &Type, index: &Expr, it: &Type) -> Type {
        match bt {
            Type::Any | Type::Null => Type::Any,
            Type::Array(item) => {
                if !it.is_any() && *it != Type::Number {
                    self.mismatch(
                        index,
                        format!("an array index must be a number, found {}", it.article()),
                        None,
                    );
                }
                (**item).clone()
            }
            Type::Object(o) => {
                if !it.is_any() && *it != Type::String {
                    self.mismatch(
                        index,
                        format!("an object key must be a string, found {}", it.article()),
                        None,
                    );
                }
                match &index.kind {
                    ExprKind::Str(k) => o.fields.get(k).cloned().unwrap_or(Type::Any),
                    _ => Type::Any,
                }
            }
            Type::String => {
                if !it.is_any() && *it != Type::Number {
                    self.mismatch(
                        index,
                        format!("a string index must be a number, found {}", it.article()),
                        None,
                    );
                }
                Type::String
            }
            other => {
                self.mismatch(e, format!("cannot index {}", other.article()), None);
                Type::Any
            }
        }
    }

    fn call(&mut self, e: &Expr, name: &str, args: &[Expr], types: &[Type]) -> Type {
        let Some(f) = builtins::lookup(name) else { return Type::Any };
        let n = f.params.len();
        let arity_ok = if f.variadic { args.len() >= n } else { args.len() == n };
        if !arity_ok {
            let want = if f.variadic { format!("at least {n}") } else { n.to_string() };
            let plural = if n == 1 && !f.variadic { "argument" } else { "arguments" };
            self.mismatch(
                e,
                format!("`{name}` takes {want} {plural}, found {}", args.len()),
                Some(format!("signature: {}", f.signature())),
            );
            return f.result(types);
        }
        for (i, (p, t)) in f.params.iter().zip(types).enumerate() {
            if !p.accepts(t) {
                self.mismatch(
                    &args[i],
                    format!("argument {} of `{name}` must be {}, found {}", i + 1, p.describe(), t.article()),
                    Some(format!("signature: {}", f.signature())),
                );
            }
        }
        f.result(types)
    }

    fn binary(&mut self, e: &Expr, op: BinOp, lhs: &Expr, rhs: &Expr, l: &Type, r: &Type) -> Type {
        let sym = op.as_str();
        match op {
            BinOp::And | BinOp::Or => {
                self.expect_bool(lhs, l, &format!("the left side of `{sym}`"));
                self.expect_bool(rhs, r, &format!("the right side of `{sym}`"));
                Type::Bool
            }
            BinOp::Coalesce => match l {
                Type::Any | Type::Null => r.clone(),
                _ => l.join(r),
            },
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                self.compare(e, op, l, r)
            }
            BinOp::In => self.contains(e, l, r),
            BinOp::Add => self.add(e, l, r),
            BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                for (side, t) in [(lhs, l), (rhs, r)] {
                    if !matches!(t, Type::Any | Type::Number) {
                        self.mismatch(side, format!("`{sym}` needs numbers, found {}", t.article()), None);
                    }
                }
                Type::Number
            }
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`: a boolean, reported when the two
    /// sides can never be equal or cannot be ordered.
    fn compare(&mut self, e: &Expr, op: BinOp, l: &Type, r: &Type) -> Type {
        let sym = op.as_str();
        if matches!(op, BinOp::Eq | BinOp::Ne) {
            if !l.compatible(r) {
                self.mismatch(
                    e,
                    format!("`{sym}` compares {} with {}: they are never equal", l.article(), r.article()),
                    Some("there is no implicit conversion between strings and numbers".into()),
                );
            }
            return Type::Bool;
        }
        let ok = |t: &Type| matches!(t, Type::Any | Type::Number | Type::String | Type::Null);
        if !ok(l) || !ok(r) || !l.compatible(r) {
            self.mismatch(
                e,
                format!(
                    "`{sym}` needs two numbers or two strings, found {} and {}",
                    l.article(),
                    r.article()
                ),
                None,
            );
        }
        Type::Bool
    }

    /// `l in r`: an element of an array, a substring, or a key of an object.
    fn contains(&mut self, e: &Expr, l: &Type, r: &Type) -> Type {
        match r {
            Type::Any | Type::Null => {}
            Type::Array(item) if l.compatible(item) => {}
            Type::String | Type::Object(_) if matches!(l, Type::String | Type::Any | Type::Null) => {}
            _ => self.mismatch(
                e,
                format!("`in` cannot look for {} in {}", l.article(), r.article()),
                Some(
                    "`in` tests an element of an array, a substring of a string, or a key of an object"
                        .into(),
                ),
            ),
        }
        Type::Bool
    }

    /// `+`: two numbers added or two strings joined.
    fn add(&mut self, e: &Expr, l: &Type, r: &Type) -> Type {
        match (l, r) {
            (Type::Number, Type::Number) => Type::Number,
            (Type::String, Type::String) => Type::String,
            (Type::Any, t) | (t, Type::Any) if matches!(t, Type::Number | Type::String | Type::Any) => {
                t.clone()
            }
            _ => {
                self.mismatch(
                    e,
                    format!(
                        "`+` adds two numbers or joins two strings, found {} and {}",
                        l.article(),
                        r.article()
                    ),
                    Some("convert explicitly with `format('{} {}', a, b)` or `to_json(x)`".into()),
                );
                Type::Any
            }
        }
    }
}

/// Whether `e` is `steps.X` or `steps['X']` with `steps` the built-in root.
pub fn is_step_ref(cx: &Cx, step: usize, site: crate::ir::ExprSite, e: &Expr) -> bool {
    let base = match &e.kind {
        ExprKind::Field { base, .. } => base,
        ExprKind::Index { base, index, .. } if matches!(index.kind, ExprKind::Str(_)) => base,
        _ => return false,
    };
    matches!(&base.kind, ExprKind::Var(v) if v == "steps")
        && scope::resolve(cx, step, site, "steps") == Some(Binding::Steps)
}

fn steps_status_type() -> Type {
    Type::Object(crate::ir::ObjectType::closed([("status", Type::String)]))
}

/// The item type of a step's `foreach` collection (`any` when unknown).
pub fn loop_item_type(cx: &Cx, step: usize) -> Type {
    let s = &cx.wf.steps[step];
    let Some(f) = &s.foreach else { return Type::Any };
    let Some(expr) = &f.expr else { return Type::Any };
    let mut inf = Infer {
        cx,
        step,
        site: ExprSite::Foreach,
        loc: &f.loc,
        text: &f.text,
        loop_item: Type::Any,
        out: None,
    };
    inf.infer(expr).item().unwrap_or(Type::Any)
}
