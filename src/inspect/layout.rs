//! A layered (Sugiyama-style) layout of a workflow's DAG, computed here so
//! the page and the terminal draw the same picture: layers by longest path
//! from the entry steps, an edge over several layers routed through one
//! virtual point per layer it crosses, the order within each layer by
//! barycenter sweeps (ties kept in declaration order), then coordinates
//! pulled towards each node's neighbours without overlap.
//!
//! Deterministic: the same graph gives the same layout (no hashing, no
//! randomness), so a page reloads to the same picture.

/// Sizes of the drawing, in pixels.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// A node's box.
    pub node_w: f64,
    /// A node's box.
    pub node_h: f64,
    /// The least space between two boxes of one layer.
    pub h_gap: f64,
    /// The space between two layers.
    pub v_gap: f64,
    /// The width a virtual point takes in its layer.
    pub virtual_w: f64,
    /// Around the whole drawing.
    pub margin: f64,
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes { node_w: 176.0, node_h: 44.0, h_gap: 24.0, v_gap: 56.0, virtual_w: 12.0, margin: 16.0 }
    }
}

/// Where everything went.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Each node's layer (0 for the entry steps).
    pub layer: Vec<usize>,
    /// The real nodes of each layer, left to right.
    pub layers: Vec<Vec<usize>>,
    /// Each node's centre.
    pub centre: Vec<(f64, f64)>,
    /// Each edge's polyline, in the order the edges were given: from the
    /// bottom of its source through its virtual points to the top of its target.
    pub edge_points: Vec<Vec<(f64, f64)>>,
    /// The drawing's size.
    pub width: f64,
    /// The drawing's size.
    pub height: f64,
}

/// An item of a layer: a node, or the virtual point of an edge crossing it.
#[derive(Clone, Copy, Debug)]
enum Item {
    Node(usize),
    Virtual { edge: usize },
}

/// Virtual points at most this many times the number of nodes (plus a
/// floor): past it, long edges are drawn straight instead of routed.
const VIRTUAL_BUDGET: usize = 8;

/// How many barycenter sweeps (down and up) order the layers.
const SWEEPS: usize = 4;

/// Lays out `n` nodes with `edges` (`from → to`), given a topological
/// `order` of them (nodes missing from it, as in a cycle, go in layer 0).
pub fn layout(n: usize, edges: &[(usize, usize)], order: &[usize], sizes: Sizes) -> Layout {
    let layer = layers_of(n, edges, order);
    let depth = layer.iter().max().map_or(0, |&m| m + 1);
    let g = Layered::new(n, edges, &layer);
    let rows = g.rows(edges, depth);
    let x = g.xs(&rows, sizes);
    let width_of = |i: usize| g.width(i, sizes);
    let left = (0..g.items.len()).map(|i| x[i] - width_of(i) / 2.0).fold(f64::INFINITY, f64::min);
    let left = if left.is_finite() { left } else { 0.0 };
    let right = (0..g.items.len()).map(|i| x[i] + width_of(i) / 2.0).fold(0f64, f64::max);
    let y_of = |l: usize| sizes.margin + l as f64 * (sizes.node_h + sizes.v_gap) + sizes.node_h / 2.0;
    let centre: Vec<(f64, f64)> = (0..g.items.len())
        .map(|i| (round(x[i] - left + sizes.margin), round(y_of(g.item_layer[i]))))
        .collect();
    let edge_points = g
        .chains
        .iter()
        .map(|chain| {
            let mut points = Vec::with_capacity(chain.len());
            for (k, &i) in chain.iter().enumerate() {
                let (cx, cy) = centre[i];
                let half = sizes.node_h / 2.0;
                match (k, g.items[i]) {
                    (0, _) => points.push((cx, cy + half)),
                    (_, Item::Node(_)) => points.push((cx, cy - half)),
                    (_, Item::Virtual { .. }) => points.push((cx, cy)),
                }
            }
            points
        })
        .collect();
    let layers = rows
        .iter()
        .map(|row| {
            row.iter()
                .filter_map(|&i| match g.items[i] {
                    Item::Node(v) => Some(v),
                    Item::Virtual { .. } => None,
                })
                .collect()
        })
        .collect();
    Layout {
        layer,
        layers,
        centre: centre[..n].to_vec(),
        edge_points,
        width: round(right - left + 2.0 * sizes.margin),
        height: round(
            2.0 * sizes.margin + depth as f64 * sizes.node_h + depth.saturating_sub(1) as f64 * sizes.v_gap,
        ),
    }
}

/// The graph in layers: its nodes and the virtual points of the edges
/// crossing a layer, each item's layer, the chain of items each edge
/// passes through, and each item's neighbours in the layer above and below.
struct Layered {
    items: Vec<Item>,
    item_layer: Vec<usize>,
    chains: Vec<Vec<usize>>,
    up: Vec<Vec<usize>>,
    down: Vec<Vec<usize>>,
}

impl Layered {
    fn new(n: usize, edges: &[(usize, usize)], layer: &[usize]) -> Layered {
        let mut items: Vec<Item> = (0..n).map(Item::Node).collect();
        let mut item_layer: Vec<usize> = layer.to_vec();
        let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
        let budget = VIRTUAL_BUDGET * n + 2000;
        for (e, &(from, to)) in edges.iter().enumerate() {
            let mut chain = vec![from];
            let span = layer[to].saturating_sub(layer[from]);
            if span > 1 && items.len() - n + span - 1 <= budget {
                for l in layer[from] + 1..layer[to] {
                    chain.push(items.len());
                    items.push(Item::Virtual { edge: e });
                    item_layer.push(l);
                }
            }
            chain.push(to);
            chains.push(chain);
        }
        let mut up: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
        let mut down: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
        for chain in &chains {
            for pair in chain.windows(2) {
                if item_layer[pair[1]] == item_layer[pair[0]] + 1 {
                    down[pair[0]].push(pair[1]);
                    up[pair[1]].push(pair[0]);
                }
            }
        }
        Layered { items, item_layer, chains, up, down }
    }

    /// The width an item takes in its row.
    fn width(&self, i: usize, sizes: Sizes) -> f64 {
        match self.items[i] {
            Item::Node(_) => sizes.node_w,
            Item::Virtual { .. } => sizes.virtual_w,
        }
    }

    /// The items of each layer, left to right: first in declaration order
    /// (a virtual point beside its source), then by barycenter sweeps.
    fn rows(&self, edges: &[(usize, usize)], depth: usize) -> Vec<Vec<usize>> {
        let key = |i: usize| match self.items[i] {
            Item::Node(v) => v as f64,
            Item::Virtual { edge } => edges[edge].0 as f64 + 0.5,
        };
        let mut rows: Vec<Vec<usize>> = vec![Vec::new(); depth.max(1)];
        for i in 0..self.items.len() {
            rows[self.item_layer[i]].push(i);
        }
        for row in &mut rows {
            row.sort_by(|&a, &b| key(a).total_cmp(&key(b)));
        }
        let mut pos = vec![0usize; self.items.len()];
        for row in &rows {
            for (k, &i) in row.iter().enumerate() {
                pos[i] = k;
            }
        }
        for _ in 0..SWEEPS {
            for row in rows.iter_mut().skip(1) {
                reorder(row, &self.up, &mut pos);
            }
            for l in (0..rows.len().saturating_sub(1)).rev() {
                reorder(&mut rows[l], &self.down, &mut pos);
            }
        }
        for row in rows.iter_mut().skip(1) {
            reorder(row, &self.up, &mut pos);
        }
        rows
    }

    /// Each item's x: the rows packed and centred, then pulled towards
    /// the neighbours.
    fn xs(&self, rows: &[Vec<usize>], sizes: Sizes) -> Vec<f64> {
        let width_of = |i: usize| self.width(i, sizes);
        let mut x = vec![0f64; self.items.len()];
        let row_width = |row: &[usize]| -> f64 {
            row.iter().map(|&i| width_of(i)).sum::<f64>() + sizes.h_gap * row.len().saturating_sub(1) as f64
        };
        let widest = rows.iter().map(|r| row_width(r)).fold(0f64, f64::max);
        for row in rows {
            let mut at = (widest - row_width(row)) / 2.0;
            for &i in row {
                x[i] = at + width_of(i) / 2.0;
                at += width_of(i) + sizes.h_gap;
            }
        }
        for _ in 0..SWEEPS {
            for row in rows.iter().skip(1) {
                pull(row, &self.up, &mut x, &width_of, sizes.h_gap);
            }
            for l in (0..rows.len().saturating_sub(1)).rev() {
                pull(&rows[l], &self.down, &mut x, &width_of, sizes.h_gap);
            }
        }
        for row in rows.iter().skip(1) {
            pull(row, &self.up, &mut x, &width_of, sizes.h_gap);
        }
        x
    }
}

/// Longest path from the entry nodes, in topological order.
fn layers_of(n: usize, edges: &[(usize, usize)], order: &[usize]) -> Vec<usize> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(from, to) in edges {
        if from != to {
            preds[to].push(from);
        }
    }
    let mut layer = vec![0usize; n];
    let mut placed = vec![false; n];
    for &v in order {
        layer[v] = preds[v].iter().filter(|&&p| placed[p]).map(|&p| layer[p] + 1).max().unwrap_or(0);
        placed[v] = true;
    }
    layer
}

/// Orders a row by the mean position of each item's neighbours in the
/// adjacent row (`adjacent`); an item with none keeps its place.
fn reorder(row: &mut [usize], adjacent: &[Vec<usize>], pos: &mut [usize]) {
    let centre = |i: usize| -> f64 {
        let ns = &adjacent[i];
        if ns.is_empty() {
            return pos[i] as f64;
        }
        ns.iter().map(|&j| pos[j] as f64).sum::<f64>() / ns.len() as f64
    };
    let mut keyed: Vec<(f64, usize, usize)> = row.iter().map(|&i| (centre(i), pos[i], i)).collect();
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (k, (_, _, i)) in keyed.into_iter().enumerate() {
        row[k] = i;
        pos[i] = k;
    }
}

/// Moves each item of a row towards the mean x of its neighbours, keeping
/// the row's order and the gap between boxes: items that would overlap
/// form a block centred on the mean of what its items want (the least
/// squares placement under the order).
fn pull(row: &[usize], adjacent: &[Vec<usize>], x: &mut [f64], width_of: &impl Fn(usize) -> f64, gap: f64) {
    struct Block {
        first: usize,
        len: usize,
        /// Sum over the block's items of (wanted x − offset in the block).
        sum: f64,
        /// The block's first item's x.
        at: f64,
        /// From the first item's centre to the last's.
        span: f64,
    }
    let want = |i: usize| {
        let ns = &adjacent[i];
        if ns.is_empty() { x[i] } else { ns.iter().map(|&j| x[j]).sum::<f64>() / ns.len() as f64 }
    };
    let wanted: Vec<f64> = row.iter().map(|&i| want(i)).collect();
    let step = |k: usize| (width_of(row[k - 1]) + width_of(row[k])) / 2.0 + gap;
    let mut blocks: Vec<Block> = Vec::new();
    for (k, &w) in wanted.iter().enumerate() {
        blocks.push(Block { first: k, len: 1, sum: w, at: w, span: 0.0 });
        // Merge while the new block overlaps the one before it.
        while blocks.len() > 1 {
            let b = blocks.pop().unwrap_or_else(|| unreachable!());
            let a = blocks.last_mut().unwrap_or_else(|| unreachable!());
            let joint = step(b.first);
            if a.at + a.span + joint <= b.at {
                blocks.push(b);
                break;
            }
            let shift = a.span + joint;
            a.sum += b.sum - shift * b.len as f64;
            a.len += b.len;
            a.span += joint + b.span;
            a.at = a.sum / a.len as f64;
        }
    }
    for b in &blocks {
        let mut at = b.at;
        for k in b.first..b.first + b.len {
            if k > b.first {
                at += step(k);
            }
            x[row[k]] = at;
        }
    }
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diamond_is_three_layers_with_the_middle_side_by_side() {
        // a → b, a → c, b → d, c → d
        let edges = [(0, 1), (0, 2), (1, 3), (2, 3)];
        let l = layout(4, &edges, &[0, 1, 2, 3], Sizes::default());
        assert_eq!(l.layer, vec![0, 1, 1, 2]);
        assert_eq!(l.layers, vec![vec![0], vec![1, 2], vec![3]]);
        assert!(l.centre[1].0 < l.centre[2].0);
        assert_eq!(l.centre[1].1, l.centre[2].1);
        // The sink sits under the middle of the two.
        assert!((l.centre[3].0 - (l.centre[1].0 + l.centre[2].0) / 2.0).abs() < 1.0, "{l:?}");
        assert_eq!(l.edge_points.len(), 4);
    }

    #[test]
    fn a_long_edge_bends_through_virtual_points_and_boxes_never_overlap() {
        // a → b → c → d and a → d: the long edge passes layers 1 and 2.
        let edges = [(0, 1), (1, 2), (2, 3), (0, 3)];
        let l = layout(4, &edges, &[0, 1, 2, 3], Sizes::default());
        assert_eq!(l.edge_points[3].len(), 4);
        let s = Sizes::default();
        for row in &l.layers {
            for pair in row.windows(2) {
                assert!(l.centre[pair[1]].0 - l.centre[pair[0]].0 >= s.node_w + s.h_gap - 0.2);
            }
        }
    }

    #[test]
    fn the_same_graph_lays_out_the_same_way() {
        let edges: Vec<(usize, usize)> = (1..60).map(|i| (i / 3, i)).collect();
        let order: Vec<usize> = (0..60).collect();
        let a = layout(60, &edges, &order, Sizes::default());
        let b = layout(60, &edges, &order, Sizes::default());
        assert_eq!(a, b);
        assert!(a.width > 0.0 && a.height > 0.0);
    }
}
