/** A node of {@link AvlTree}. `value` may be changed in place; `key` never is. */
export interface AvlNode<V> {
  readonly key: bigint;
  value: V;
  left: AvlNode<V> | undefined;
  right: AvlNode<V> | undefined;
  height: number;
}

/**
 * An ordered map from bigint keys to values, kept balanced (AVL) so that lookup, floor/higher
 * search, insertion and removal are all O(log n) with no array shifting. Internal building block of
 * {@link IntervalSet}; not part of the public API.
 */
export class AvlTree<V> {
  #root: AvlNode<V> | undefined;
  #count = 0;

  /** Number of keys. */
  get count(): number {
    return this.#count;
  }

  /** The node with the largest key ≤ `key`, if any. */
  floor(key: bigint): AvlNode<V> | undefined {
    let best: AvlNode<V> | undefined;
    for (let n = this.#root; n !== undefined;) {
      if (n.key === key) return n;
      if (n.key < key) {
        best = n;
        n = n.right;
      } else {
        n = n.left;
      }
    }
    return best;
  }

  /** The node with the smallest key > `key`, if any. */
  higher(key: bigint): AvlNode<V> | undefined {
    let best: AvlNode<V> | undefined;
    for (let n = this.#root; n !== undefined;) {
      if (n.key > key) {
        best = n;
        n = n.left;
      } else {
        n = n.right;
      }
    }
    return best;
  }

  /** The node with the smallest key, if any. */
  first(): AvlNode<V> | undefined {
    let n = this.#root;
    while (n?.left !== undefined) n = n.left;
    return n;
  }

  /** Sets `key` to `value`, inserting it when absent. */
  set(key: bigint, value: V): void {
    this.#root = this.#insert(this.#root, key, value);
  }

  /** Removes `key`; returns whether it was present. */
  delete(key: bigint): boolean {
    const before = this.#count;
    this.#root = this.#remove(this.#root, key);
    return this.#count < before;
  }

  /** Removes every key. */
  clear(): void {
    this.#root = undefined;
    this.#count = 0;
  }

  #insert(n: AvlNode<V> | undefined, key: bigint, value: V): AvlNode<V> {
    if (n === undefined) {
      this.#count++;
      return { key, value, left: undefined, right: undefined, height: 1 };
    }
    if (key < n.key) n.left = this.#insert(n.left, key, value);
    else if (key > n.key) n.right = this.#insert(n.right, key, value);
    else n.value = value;
    return rebalance(n);
  }

  #remove(n: AvlNode<V> | undefined, key: bigint): AvlNode<V> | undefined {
    if (n === undefined) return undefined;
    if (key < n.key) {
      n.left = this.#remove(n.left, key);
    } else if (key > n.key) {
      n.right = this.#remove(n.right, key);
    } else {
      this.#count--;
      if (n.left === undefined) return n.right;
      if (n.right === undefined) return n.left;
      // Move the successor node (not just its key) into n's place, so node objects keep their pairs.
      let successor = n.right;
      while (successor.left !== undefined) successor = successor.left;
      successor.right = removeMin(n.right);
      successor.left = n.left;
      return rebalance(successor);
    }
    return rebalance(n);
  }
}

function removeMin<V>(n: AvlNode<V>): AvlNode<V> | undefined {
  if (n.left === undefined) return n.right;
  n.left = removeMin(n.left);
  return rebalance(n);
}

function heightOf<V>(n: AvlNode<V> | undefined): number {
  return n === undefined ? 0 : n.height;
}

function updateHeight<V>(n: AvlNode<V>): void {
  n.height = 1 + Math.max(heightOf(n.left), heightOf(n.right));
}

function rotateRight<V>(n: AvlNode<V>, l: AvlNode<V>): AvlNode<V> {
  n.left = l.right;
  l.right = n;
  updateHeight(n);
  updateHeight(l);
  return l;
}

function rotateLeft<V>(n: AvlNode<V>, r: AvlNode<V>): AvlNode<V> {
  n.right = r.left;
  r.left = n;
  updateHeight(n);
  updateHeight(r);
  return r;
}

function rebalance<V>(n: AvlNode<V>): AvlNode<V> {
  updateHeight(n);
  const balance = heightOf(n.left) - heightOf(n.right);
  if (balance > 1 && n.left !== undefined) {
    const l = n.left;
    if (heightOf(l.left) < heightOf(l.right) && l.right !== undefined) n.left = rotateLeft(l, l.right);
    return rotateRight(n, n.left);
  }
  if (balance < -1 && n.right !== undefined) {
    const r = n.right;
    if (heightOf(r.right) < heightOf(r.left) && r.left !== undefined) n.right = rotateRight(r, r.left);
    return rotateLeft(n, n.right);
  }
  return n;
}
