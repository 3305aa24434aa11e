/**
 * A webpack loader for bench/deploy.ts's build B: replaces one exact piece of a workflow source
 * (`from`, which must be there once) with `to`, so the drill bundles a recording workflow that differs
 * from the checked-out one by one step, without a second copy of the code.
 */
/* global module -- webpack loads its loaders as CommonJS. */
module.exports = function replaceOnce(source) {
  const { from, to } = this.getOptions();
  const at = source.indexOf(from);
  if (at < 0 || source.indexOf(from, at + 1) >= 0) {
    throw new Error(`extra-step-loader: ${JSON.stringify(from)} is not in ${this.resourcePath} exactly once`);
  }
  return source.replace(from, to);
};
