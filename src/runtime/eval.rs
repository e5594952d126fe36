//! The expression evaluator: pure, total and deterministic.
//!
//! [`eval`] never fails and never panics: every ill-typed operation yields
//! `null` (or `false` for tests), so the static checker — not the runtime —
//! is where type errors are reported. The rules:
//!
//! - **Names**: an unknown root name is `null`. Roots come from a [`Scope`]
//!   (`params`, captures, the loop variable, `loop`, `workflow`, `run`, `steps`).
//! - **Access**: `a.b` and `a[i]` on `null` or on a value of the wrong kind are
//!   `null`, so `a?.b` and `a.b` evaluate alike (`?.` tells the checker the
//!   `null` is expected). Arrays take an integral, in-range, non-negative
//!   number; objects take a string key; anything else is `null`.
//! - **Arithmetic** (`* / % -`, unary `-`) takes numbers; otherwise `null`.
//!   `/` or `%` by zero is `null`; `%` is the truncated remainder (the sign of
//!   the dividend). `+` adds two numbers or concatenates two strings; any other
//!   mix is `null`. Integer operands are computed exactly in `i64` when the
//!   result fits, otherwise in `f64`.
//! - **Numbers**: an integral result within the `i64` range is an integer
//!   (`1 + 1` is `2`, not `2.0`); NaN and infinities are `null`.
//! - **Comparison** `< <= > >=`: two numbers, or two strings (by Unicode scalar
//!   values); anything else — `null` included — is `false`.
//! - **Equality** `== !=`: deep JSON equality, numbers compared as `f64`
//!   (`1 == 1.0`), object key order ignored.
//! - **`in`**: an element of an array (deep equality), a substring of a
//!   string, or a key of an object; anything else is `false`.
//! - **Logic**: `&&`, `||` short-circuit and `!` negates; there is no
//!   truthiness — only `true` counts as true ([`as_bool`]), every other value
//!   is false. The ternary's condition follows the same rule.
//! - **`??`**: the left value unless it is `null` (the right side is then not
//!   evaluated).
//! - **Functions** ([`crate::ir::builtins::FUNCTIONS`]): an unknown name, a
//!   wrong argument count or a wrong argument type yields `null`. `len` counts
//!   characters; `keys` sorts; `values` follows the sorted key order (so
//!   `values(o)[i]` belongs to `keys(o)[i]`); `join` and `format` stringify
//!   like text interpolation ([`stringify()`]); `split` on `''` yields the
//!   characters; `from_json` of invalid text is `null`; `matches` of an invalid
//!   regular expression is `false`; `format` replaces each `{}` with the next
//!   argument, `{{`/`}}` write braces, and a `{}` without an argument stays.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use regex::Regex;
use serde_json::{Map, Value};

use crate::runtime::text::number;
use crate::runtime::text::{stringify, to_json_string};
use crate::syntax::ast::{BinOp, Expr, ExprKind, UnaryOp};

/// Expressions nested deeper than this evaluate to `null` (the parser already
/// caps ASTs well below; this guards hand-built ones against stack overflow).
const MAX_EVAL_DEPTH: usize = 512;

/// How many compiled regular expressions each thread keeps.
const REGEX_CACHE_CAP: usize = 256;

/// The root names an expression can read.
pub trait Scope {
    /// The value of the root name `name` (`params`, a capture, the loop variable).
    fn lookup(&self, name: &str) -> Option<Value>;

    /// Like [`Scope::lookup`], but may borrow; scopes that own their values
    /// override it so that `mr.changes[0]` does not clone all of `mr`.
    fn get(&self, name: &str) -> Option<Cow<'_, Value>> {
        self.lookup(name).map(Cow::Owned)
    }
}

impl Scope for Map<String, Value> {
    fn lookup(&self, name: &str) -> Option<Value> {
        Map::get(self, name).cloned()
    }

    fn get(&self, name: &str) -> Option<Cow<'_, Value>> {
        Map::get(self, name).map(Cow::Borrowed)
    }
}

/// A JSON object is a scope of its members; any other value is empty.
impl Scope for Value {
    fn lookup(&self, name: &str) -> Option<Value> {
        self.as_object().and_then(|m| m.get(name)).cloned()
    }

    fn get(&self, name: &str) -> Option<Cow<'_, Value>> {
        self.as_object().and_then(|m| m.get(name)).map(Cow::Borrowed)
    }
}

impl<T: Scope + ?Sized> Scope for &T {
    fn lookup(&self, name: &str) -> Option<Value> {
        (**self).lookup(name)
    }

    fn get(&self, name: &str) -> Option<Cow<'_, Value>> {
        (**self).get(name)
    }
}

/// A scope backed by a closure: `FnScope(|name| …)`.
pub struct FnScope<F>(pub F);

impl<F: Fn(&str) -> Option<Value>> Scope for FnScope<F> {
    fn lookup(&self, name: &str) -> Option<Value> {
        (self.0)(name)
    }
}

/// `true` only for `Value::Bool(true)`: the language has no truthiness.
pub fn as_bool(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// Evaluates an expression. Total: ill-typed operations yield `null`.
pub fn eval(expr: &Expr, scope: &dyn Scope) -> Value {
    eval_cow(expr, scope).into_owned()
}

/// Like [`eval`], but borrows from the scope where it can (paths).
pub fn eval_cow<'s>(expr: &Expr, scope: &'s dyn Scope) -> Cow<'s, Value> {
    Evaluator { scope }.eval(expr, 0)
}

/// Deep JSON equality with numbers compared as `f64` and key order ignored.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| values_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

static NULL: Value = Value::Null;

struct Evaluator<'s> {
    scope: &'s dyn Scope,
}

impl<'s> Evaluator<'s> {
    fn eval(&self, expr: &Expr, depth: usize) -> Cow<'s, Value> {
        if depth > MAX_EVAL_DEPTH {
            return Cow::Borrowed(&NULL);
        }
        let d = depth + 1;
        let owned = match &expr.kind {
            ExprKind::Null => Value::Null,
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::Number(n) => number(*n),
            ExprKind::Str(s) => Value::String(s.clone()),
            ExprKind::Array(items) => {
                Value::Array(items.iter().map(|e| self.eval(e, d).into_owned()).collect())
            }
            ExprKind::Var(name) => return self.scope.get(name).unwrap_or(Cow::Borrowed(&NULL)),
            ExprKind::Field { base, name, .. } => {
                return project(self.eval(base, d), |v| v.as_object().and_then(|m| m.get(name.as_str())));
            }
            ExprKind::Index { base, index, .. } => {
                let key = self.eval(index, d);
                return project(self.eval(base, d), |v| index_value(v, &key));
            }
            ExprKind::Call { name, args, .. } => {
                let args: Vec<Cow<'s, Value>> = args.iter().map(|a| self.eval(a, d)).collect();
                let args: Vec<&Value> = args.iter().map(|a| a.as_ref()).collect();
                call(name, &args)
            }
            ExprKind::Unary { op: UnaryOp::Not, expr } => Value::Bool(!as_bool(&self.eval(expr, d))),
            ExprKind::Unary { op: UnaryOp::Neg, expr } => match self.eval(expr, d).as_ref() {
                Value::Number(n) => match n.as_i64().and_then(i64::checked_neg) {
                    Some(i) => Value::from(i),
                    None => n.as_f64().map_or(Value::Null, |f| number(-f)),
                },
                _ => Value::Null,
            },
            ExprKind::Binary { op: BinOp::And, lhs, rhs, .. } => {
                Value::Bool(as_bool(&self.eval(lhs, d)) && as_bool(&self.eval(rhs, d)))
            }
            ExprKind::Binary { op: BinOp::Or, lhs, rhs, .. } => {
                Value::Bool(as_bool(&self.eval(lhs, d)) || as_bool(&self.eval(rhs, d)))
            }
            ExprKind::Binary { op: BinOp::Coalesce, lhs, rhs, .. } => {
                let l = self.eval(lhs, d);
                return if l.is_null() { self.eval(rhs, d) } else { l };
            }
            ExprKind::Binary { op, lhs, rhs, .. } => binary(*op, &self.eval(lhs, d), &self.eval(rhs, d)),
            ExprKind::Ternary { cond, then, otherwise } => {
                let branch = if as_bool(&self.eval(cond, d)) { then } else { otherwise };
                return self.eval(branch, d);
            }
        };
        Cow::Owned(owned)
    }
}

/// Applies an accessor to a borrowed or owned value, borrowing when it can.
fn project<'s>(base: Cow<'s, Value>, f: impl Fn(&Value) -> Option<&Value>) -> Cow<'s, Value> {
    match base {
        Cow::Borrowed(v) => Cow::Borrowed(f(v).unwrap_or(&NULL)),
        Cow::Owned(v) => Cow::Owned(f(&v).cloned().unwrap_or(Value::Null)),
    }
}

fn index_value<'v>(base: &'v Value, key: &Value) -> Option<&'v Value> {
    match (base, key) {
        (Value::Array(items), Value::Number(n)) => {
            let i = match n.as_u64() {
                Some(i) => i,
                None => {
                    let f = n.as_f64()?;
                    if f.fract() != 0.0 || f < 0.0 {
                        return None;
                    }
                    f as u64
                }
            };
            items.get(usize::try_from(i).ok()?)
        }
        (Value::Object(map), Value::String(k)) => map.get(k),
        _ => None,
    }
}

fn binary(op: BinOp, l: &Value, r: &Value) -> Value {
    match op {
        BinOp::Eq => Value::Bool(values_equal(l, r)),
        BinOp::Ne => Value::Bool(!values_equal(l, r)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = match (l, r) {
                (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
                    (Some(a), Some(b)) => Some(a.cmp(&b)),
                    _ => a.as_f64().zip(b.as_f64()).and_then(|(a, b)| a.partial_cmp(&b)),
                },
                (Value::String(a), Value::String(b)) => Some(a.as_str().cmp(b.as_str())),
                _ => None,
            };
            Value::Bool(ord.is_some_and(|o| match op {
                BinOp::Lt => o.is_lt(),
                BinOp::Le => o.is_le(),
                BinOp::Gt => o.is_gt(),
                _ => o.is_ge(),
            }))
        }
        BinOp::In => Value::Bool(match (l, r) {
            (_, Value::Array(items)) => items.iter().any(|i| values_equal(l, i)),
            (Value::String(needle), Value::String(hay)) => hay.contains(needle.as_str()),
            (Value::String(key), Value::Object(map)) => map.contains_key(key),
            _ => false,
        }),
        BinOp::Add => match (l, r) {
            (Value::String(a), Value::String(b)) => Value::String(format!("{a}{b}")),
            _ => arithmetic(op, l, r),
        },
        // `&&`, `||`, `??` are handled before their operands are evaluated.
        BinOp::And | BinOp::Or | BinOp::Coalesce => Value::Null,
        BinOp::Mul | BinOp::Div | BinOp::Rem | BinOp::Sub => arithmetic(op, l, r),
    }
}

fn arithmetic(op: BinOp, l: &Value, r: &Value) -> Value {
    let (Value::Number(a), Value::Number(b)) = (l, r) else {
        return Value::Null;
    };
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        let exact = match op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Rem if y == 0 => return Value::Null,
            BinOp::Rem => x.checked_rem(y),
            // Division goes through f64 unless it is exact.
            BinOp::Div if y != 0 && x.checked_rem(y) == Some(0) => x.checked_div(y),
            _ => None,
        };
        if let Some(v) = exact {
            return Value::from(v);
        }
    }
    let (Some(x), Some(y)) = (a.as_f64(), b.as_f64()) else {
        return Value::Null;
    };
    match op {
        BinOp::Add => number(x + y),
        BinOp::Sub => number(x - y),
        BinOp::Mul => number(x * y),
        BinOp::Div | BinOp::Rem if y == 0.0 => Value::Null,
        BinOp::Div => number(x / y),
        BinOp::Rem => number(x % y),
        _ => Value::Null,
    }
}

/// Calls a built-in function; see the module doc for the rules.
fn call(name: &str, args: &[&Value]) -> Value {
    use Value::{Array as A, Object as O, String as S};
    match (name, args) {
        ("len", [S(s)]) => Value::from(s.chars().count()),
        ("len", [A(a)]) => Value::from(a.len()),
        ("len", [O(o)]) => Value::from(o.len()),
        ("contains", [S(s), S(x)]) => Value::Bool(s.contains(x.as_str())),
        ("contains", [A(a), x]) => Value::Bool(a.iter().any(|i| values_equal(i, x))),
        ("starts_with", [S(s), S(p)]) => Value::Bool(s.starts_with(p.as_str())),
        ("ends_with", [S(s), S(p)]) => Value::Bool(s.ends_with(p.as_str())),
        ("lower", [S(s)]) => S(s.to_lowercase()),
        ("upper", [S(s)]) => S(s.to_uppercase()),
        ("trim", [S(s)]) => S(s.trim().to_string()),
        ("join", [A(a), S(sep)]) => S(a.iter().map(stringify).collect::<Vec<_>>().join(sep)),
        ("split", [S(s), S(sep)]) if sep.is_empty() => A(s.chars().map(|c| S(c.to_string())).collect()),
        ("split", [S(s), S(sep)]) => A(s.split(sep.as_str()).map(|p| S(p.to_string())).collect()),
        ("keys", [O(o)]) => A(sorted(o).into_iter().map(|(k, _)| S(k.clone())).collect()),
        ("values", [O(o)]) => A(sorted(o).into_iter().map(|(_, v)| v.clone()).collect()),
        ("default", [a, b]) => (if a.is_null() { *b } else { *a }).clone(),
        ("exists", [a]) => Value::Bool(!a.is_null()),
        ("to_json", [a]) => S(to_json_string(a)),
        ("from_json", [S(s)]) => serde_json::from_str(s).unwrap_or(Value::Null),
        ("format", [S(f), rest @ ..]) => S(format(f, rest)),
        ("matches", [S(s), S(re)]) => Value::Bool(regex_matches(s, re)),
        _ => Value::Null,
    }
}

fn sorted(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = o.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

fn format(fmt: &str, args: &[&Value]) -> String {
    let mut out = String::with_capacity(fmt.len());
    let mut args = args.iter();
    let mut rest = fmt;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let step = if tail.starts_with("{{") {
            out.push('{');
            2
        } else if tail.starts_with("}}") {
            out.push('}');
            2
        } else if tail.starts_with("{}") {
            match args.next() {
                Some(v) => out.push_str(&stringify(v)),
                None => out.push_str("{}"),
            }
            2
        } else {
            out.push_str(&tail[..1]);
            1
        };
        rest = &tail[step..];
    }
    out.push_str(rest);
    out
}

/// Compiled regular expressions (`None`: the pattern is invalid), with their
/// insertion order for eviction.
type RegexCache = (HashMap<String, Option<Regex>>, VecDeque<String>);

thread_local! {
    static REGEX_CACHE: RefCell<RegexCache> = RefCell::new((HashMap::new(), VecDeque::new()));
}

fn regex_matches(s: &str, pattern: &str) -> bool {
    REGEX_CACHE.with(|cache| {
        let Ok(mut cache) = cache.try_borrow_mut() else {
            return compile(pattern).is_some_and(|re| re.is_match(s));
        };
        let (map, order) = &mut *cache;
        if let Some(re) = map.get(pattern) {
            return re.as_ref().is_some_and(|re| re.is_match(s));
        }
        let re = compile(pattern);
        let matched = re.as_ref().is_some_and(|re| re.is_match(s));
        while map.len() >= REGEX_CACHE_CAP {
            match order.pop_front() {
                Some(old) => map.remove(&old),
                None => break,
            };
        }
        map.insert(pattern.to_string(), re);
        order.push_back(pattern.to_string());
        matched
    })
}

fn compile(pattern: &str) -> Option<Regex> {
    regex::RegexBuilder::new(pattern).size_limit(1 << 20).build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Span;
    use crate::syntax::expr::parse_expr;
    use serde_json::json;
    use std::cell::Cell;

    fn scope() -> Value {
        json!({
            "params": {
                "n": 3, "s": "héllo", "f": 2.5, "two": 2.0, "nul": null, "big": i64::MAX,
                "arr": [1, "a", null, {"k": [1, 2]}],
                "obj": {"b": 1, "a": 2}, "obj2": {"a": 2, "b": 1.0},
            },
            "mr": {"title": "Fix", "changes": [{"new_path": "a.rs"}, {"new_path": null}]},
        })
    }

    fn ev(src: &str) -> Value {
        let expr = parse_expr(src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
        eval(&expr, &scope())
    }

    fn check(cases: &[(&str, Value)]) {
        for (src, want) in cases {
            assert_eq!(ev(src), *want, "{src}");
        }
    }

    #[rustfmt::skip]
    #[test]
    fn literals_and_paths() {
        check(&[
            ("null", json!(null)), ("12", json!(12)), ("1.5", json!(1.5)), ("'a'", json!("a")),
            ("[1, 'a', null, [true]]", json!([1, "a", null, [true]])), ("params.n", json!(3)),
            ("params.missing", json!(null)), ("nope", json!(null)), ("nope.a.b[0]", json!(null)),
            ("params.nul?.x", json!(null)), ("params.nul.x", json!(null)), ("params.n.x", json!(null)),
            ("params.arr[0]", json!(1)), ("params.arr[3].k[1]", json!(2)),
            ("params.arr[1 + 2]['k']", json!([1, 2])), ("params.arr[-1]", json!(null)),
            ("params.arr[9]", json!(null)), ("params.arr[1.5]", json!(null)),
            ("params.arr[params.two - 1]", json!("a")), ("params.arr['0']", json!(null)),
            ("params.obj['a']", json!(2)), ("params.obj[0]", json!(null)), ("params.s[0]", json!(null)),
            ("params?.['n']", json!(3)), ("mr.changes[1].new_path", json!(null)), ("[params.n][0]", json!(3)),
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn arithmetic_and_numbers() {
        check(&[
            ("1 + 1", json!(2)), ("7 - 10", json!(-3)), ("2 * 3.5", json!(7)), ("7 / 2", json!(3.5)),
            ("4 / 2", json!(2)), ("params.two * 2", json!(4)), ("7 % 3", json!(1)), ("-7 % 3", json!(-1)),
            ("7.5 % 2", json!(1.5)), ("0.1 + 0.2", json!(0.30000000000000004)), ("1 / 0", json!(null)),
            ("1 % 0", json!(null)), ("1.5 / 0", json!(null)), ("1.5 % 0", json!(null)),
            ("'a' + 'b'", json!("ab")), ("'é' + ''", json!("é")), ("'a' + 1", json!(null)),
            ("1 + null", json!(null)), ("null + null", json!(null)), ("[1] + [2]", json!(null)),
            ("true * 2", json!(null)), ("-params.n", json!(-3)), ("-0", json!(0)), ("-'x'", json!(null)),
            ("- -params.f", json!(2.5)), ("params.big - 1", json!(i64::MAX - 1)),
            ("params.big + 1", json!(9.223372036854776e18)),
        ]);
        assert_eq!(number(f64::NAN), json!(null));
        assert_eq!(number(f64::INFINITY), json!(null));
        assert_eq!(number(-0.0), json!(0));
        assert_eq!(number(-(2f64.powi(63))), json!(i64::MIN));
        assert!(number(2f64.powi(63)).as_number().is_some_and(|n| n.is_f64()));
    }

    #[rustfmt::skip]
    #[test]
    fn comparison_equality_and_in() {
        check(&[
            ("1 < 2", json!(true)), ("2 <= 2", json!(true)), ("3 > 2.5", json!(true)),
            ("1 >= 2", json!(false)), ("'a' < 'b'", json!(true)), ("'b' < 'ab'", json!(false)),
            ("'é' > 'z'", json!(true)), ("null < 1", json!(false)), ("null >= null", json!(false)),
            ("1 < '2'", json!(false)), ("[1] < [2]", json!(false)), ("1 == 1.0", json!(true)),
            ("params.two == 2", json!(true)), ("[1, [2, 3]] == [1.0, [2, 3]]", json!(true)),
            ("params.obj == params.obj2", json!(true)), ("params.obj == params.arr", json!(false)),
            ("null == null", json!(true)), ("null != 0", json!(true)), ("'1' == 1", json!(false)),
            ("[1] != [1, 2]", json!(true)), ("1 in [1, 2]", json!(true)), ("2.0 in [1, 2]", json!(true)),
            ("[2] in [[2], 3]", json!(true)), ("3 in [1]", json!(false)), ("null in [null]", json!(true)),
            ("'ell' in 'hello'", json!(true)), ("'' in 'hello'", json!(true)),
            ("'x' in 'hello'", json!(false)), ("'a' in params.obj", json!(true)),
            ("'z' in params.obj", json!(false)), ("1 in params.obj", json!(false)),
            ("1 in 'a1'", json!(false)), ("'a' in null", json!(false)),
        ]);
    }

    #[rustfmt::skip]
    #[test]
    fn logic_coalesce_and_ternary() {
        check(&[
            ("true && false", json!(false)), ("true && true", json!(true)), ("false || true", json!(true)),
            ("!true", json!(false)), ("!null", json!(true)), ("!1", json!(true)), ("1 && true", json!(false)),
            ("true && 1", json!(false)), ("null || true", json!(true)), ("'x' || 'y'", json!(false)),
            ("null ?? 1", json!(1)), ("params.nul ?? 'd'", json!("d")), ("0 ?? 1", json!(0)),
            ("false ?? true", json!(false)), ("nope?.a ?? nope ?? 2", json!(2)), ("true ? 1 : 2", json!(1)),
            ("1 ? 1 : 2", json!(2)), ("null ? 1 : 2", json!(2)), ("false ? 1 : true ? 2 : 3", json!(2)),
        ]);
        assert!(as_bool(&json!(true)) && !as_bool(&json!(1)) && !as_bool(&json!("true")));
    }

    #[test]
    fn short_circuit_skips_the_other_side() {
        let reads = Cell::new(0);
        let counting = FnScope(|name: &str| {
            reads.set(reads.get() + 1);
            (name == "t").then(|| json!(true))
        });
        for src in ["false && x", "true || x", "1 ?? x", "true ? 1 : x", "false ? x : 1"] {
            reads.set(0);
            eval(&parse_expr(src).unwrap(), &counting);
            assert_eq!(reads.get(), 0, "{src}");
        }
        assert_eq!(eval(&parse_expr("t && t").unwrap(), &counting), json!(true));
        assert_eq!(reads.get(), 2);
    }

    #[rustfmt::skip]
    #[test]
    fn functions() {
        check(&[
            ("len('héllo')", json!(5)), ("len('😀')", json!(1)), ("len([1, 2])", json!(2)),
            ("len(params.obj)", json!(2)), ("len(1)", json!(null)), ("len(null)", json!(null)),
            ("len()", json!(null)), ("len('a', 'b')", json!(null)), ("contains('hello', 'ell')", json!(true)),
            ("contains([1, 2], 2.0)", json!(true)), ("contains([[1]], [1])", json!(true)),
            ("contains('a1', 1)", json!(null)), ("contains(null, 1)", json!(null)),
            ("starts_with('abc', 'ab')", json!(true)), ("ends_with('abc', 'bc')", json!(true)),
            ("ends_with('abc', 'x')", json!(false)), ("ends_with('abc', 1)", json!(null)),
            ("lower('ÀB')", json!("àb")), ("upper('straße')", json!("STRASSE")),
            ("trim('  a b \n')", json!("a b")), ("lower(1)", json!(null)),
            ("join(['a', 1, 2.5, true, null, [1], params.two], '-')", json!("a-1-2.5-true-null-[1]-2")),
            ("join([], ',')", json!("")), ("join('a', ',')", json!(null)),
            ("split('a,b,,c', ',')", json!(["a", "b", "", "c"])), ("split('hé', '')", json!(["h", "é"])),
            ("split('', ',')", json!([""])), ("split(1, ',')", json!(null)),
            ("keys(params.obj)", json!(["a", "b"])), ("values(params.obj)", json!([2, 1])),
            ("keys([])", json!(null)), ("default(null, 1)", json!(1)), ("default(0, 1)", json!(0)),
            ("default(null, null)", json!(null)), ("exists(null)", json!(false)),
            ("exists(false)", json!(true)), ("exists(params.nope)", json!(false)),
            ("to_json(params.obj)", json!(r#"{"b":1,"a":2}"#)), ("to_json('a\"')", json!(r#""a\"""#)),
            ("to_json([1, 2.5, null, params.two])", json!("[1,2.5,null,2]")),
            ("from_json('{\"a\": [1, 2]}')", json!({"a": [1, 2]})), ("from_json('nope')", json!(null)),
            ("from_json('')", json!(null)), ("from_json(1)", json!(null)),
            ("format('{} + {} = {}', 1, 2, 1 + 2)", json!("1 + 2 = 3")),
            ("format('{{}} {}', 'x')", json!("{} x")), ("format('{} {}', 'a')", json!("a {}")),
            ("format('a}b{c')", json!("a}b{c")),
            ("format('{}|{}', [1, 'a'], null)", json!(r#"[1,"a"]|null"#)), ("format('x', 1, 2)", json!("x")),
            ("format(1)", json!(null)), ("matches('abc123', '^[a-z]+[0-9]+$')", json!(true)),
            ("matches('abc', '^b')", json!(false)), ("matches('é', '^.$')", json!(true)),
            ("matches('abc', '(')", json!(false)), ("matches(1, 'a')", json!(null)), ("nope(1)", json!(null)),
        ]);
    }

    #[test]
    fn regex_cache_evicts_and_stays_correct() {
        for round in 0..2 {
            for i in 0..(REGEX_CACHE_CAP + 50) {
                let pattern = format!("^x{i}$");
                assert!(regex_matches(&format!("x{i}"), &pattern), "{round} {i}");
                assert!(!regex_matches("y", &pattern));
            }
        }
        REGEX_CACHE.with(|c| assert!(c.borrow().0.len() <= REGEX_CACHE_CAP));
    }

    #[test]
    fn hand_built_deep_expressions_do_not_overflow() {
        let mut expr = Expr { kind: ExprKind::Number(1.0), span: Span::default() };
        for _ in 0..2000 {
            expr = Expr {
                kind: ExprKind::Unary { op: UnaryOp::Neg, expr: Box::new(expr) },
                span: Span::default(),
            };
        }
        assert_eq!(eval(&expr, &Map::new()), json!(null));
    }
}
