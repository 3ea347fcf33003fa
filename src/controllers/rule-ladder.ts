// How every kind decides: an ordered list of named rules over what it observed (its case), the
// first that applies choosing the decision, else the foot (`settle`). The order is the behaviour
// (which wins when several apply): each kind pins its own by name in a test, and the skeleton logs
// the name of the rule that chose.

/** One rung of the ladder, named (the log says which chose): its decision when it applies, else undefined. */
export interface Rule<C, D> {
  readonly name: string;
  apply(c: C): D | undefined;
}

export const rule = <C, D>(name: string, apply: (c: C) => D | undefined): Rule<C, D> => ({ name, apply });

/** A decision and the name of the rule that chose it. */
export interface Chosen<D> {
  rule: string;
  decision: D;
}

/** The decision of the first rule that applies, else the foot's (`settle`). */
export function ladder<C, D>(rules: readonly Rule<C, D>[], c: C, foot: (c: C) => D): Chosen<D> {
  for (const r of rules) {
    const decision = r.apply(c);
    if (decision) return { rule: r.name, decision };
  }
  return { rule: 'settle', decision: foot(c) };
}
