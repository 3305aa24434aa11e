/**
 * The scorecard of a rule file over one call: each question is answered yes (its category matched or
 * its rule held), no, or not applicable (its `applicableWhen` did not hold, or the data it needs is
 * missing); not applicable questions are left out of the maximum, as QA forms do. Pure.
 */
import type { Question, RulesFile } from '../../schemas/rules.ts';
import type { ScorecardResult } from '../../schemas/result.ts';
import { evaluateRule, type EvaluationContext, type RuleOutcome } from './evaluate-rules.ts';

function answerOf(answer: Question['answer'], ctx: EvaluationContext): RuleOutcome {
  if ('rule' in answer) return evaluateRule(answer.rule, ctx);
  const category = ctx.categories.get(answer.category);
  if (!category) return { held: false, points: [], unavailable: `category ${answer.category}` };
  // A category some of whose data is missing still answers when it matched on what there was.
  if (category.unavailable && !category.matched)
    return { held: false, points: [], unavailable: category.unavailable.join(', ') };
  return { held: category.matched, points: category.points };
}

export function scoreCard(
  card: NonNullable<RulesFile['scorecard']>,
  ctx: EvaluationContext,
): ScorecardResult {
  const answers: ScorecardResult['answers'] = card.questions.map((q) => {
    const base = { id: q.id, text: q.text, weight: q.weight };
    if (q.applicableWhen) {
      const when = answerOf(q.applicableWhen, ctx);
      if (when.unavailable) return { ...base, answer: 'na', points: [], reason: `no ${when.unavailable}` };
      if (!when.held) return { ...base, answer: 'na', points: [], reason: 'applicableWhen did not hold' };
    }
    const a = answerOf(q.answer, ctx);
    if (a.unavailable) return { ...base, answer: 'na', points: [], reason: `no ${a.unavailable}` };
    return { ...base, answer: a.held ? 'yes' : 'no', points: a.points };
  });
  const sum = (answer: 'yes' | 'no') =>
    answers.filter((a) => a.answer === answer).reduce((n, a) => n + a.weight, 0);
  const score = sum('yes');
  const max = score + sum('no');
  return {
    name: card.name,
    score,
    max,
    normalized: max > 0 ? Math.round((score / max) * 10000) / 10000 : null,
    answers,
  };
}
