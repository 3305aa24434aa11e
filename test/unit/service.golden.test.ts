import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseNlpResponse } from '../../service/nlp/call.ts';
import { endpointOfPath, NLP_ENDPOINTS } from '../../service/nlp/endpoints.ts';
import { ServiceError } from '../../service/errors.ts';
import { parseTokenResponse } from '../../service/tokens.ts';

interface Interaction {
  name: string;
  path: string;
  status: number;
  responseBody: unknown;
}

// Responses recorded from the live service (their source is the file's "about").
const goldenUrl = new URL('../fixtures/service-responses.json', import.meta.url);
const golden = JSON.parse(readFileSync(fileURLToPath(goldenUrl), 'utf8')) as { interactions: Interaction[] };

describe('golden recorded responses parse with the client parsers', () => {
  it('the file has the recorded interactions', () => {
    expect(golden.interactions.length).toBeGreaterThanOrEqual(13);
  });

  for (const interaction of golden.interactions) {
    it(`${interaction.name} (${interaction.status} ${interaction.path})`, () => {
      if (interaction.path.includes('/oauth/')) {
        if (interaction.status === 401) {
          let err: unknown;
          try {
            parseTokenResponse(interaction.status, interaction.responseBody);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(ServiceError);
          expect((err as ServiceError).kind).toBe('auth');
          expect((err as ServiceError).httpStatus).toBe(401);
        } else {
          const token = parseTokenResponse(interaction.status, interaction.responseBody);
          expect(token.access_token).toBe('AnEffectiveAccessToken');
          expect(token.expires_in).toBe(86399);
          expect(typeof token.issued_at).toBe('number');
        }
        return;
      }
      const name = endpointOfPath(interaction.path);
      expect(name, `no endpoint for ${interaction.path}`).toBeDefined();
      const endpoint = NLP_ENDPOINTS[name!];
      const result = parseNlpResponse(
        endpoint.path,
        endpoint.result,
        interaction.status,
        interaction.responseBody,
      );
      expect(result).toEqual((interaction.responseBody as { result: unknown }).result);
    });
  }

  it('typed results: remove_filler, sentiment, keyword and summary read as the pipeline needs them', () => {
    const byPath = (p: string) => golden.interactions.find((i) => i.path.endsWith(p))!;
    const filler = parseNlpResponse(
      '/nlp/beta/remove_filler',
      NLP_ENDPOINTS.removeFiller.result,
      200,
      byPath('remove_filler').responseBody,
    );
    expect(filler[0]!.fillers.map((f) => [f.form, f.begin_pos, f.end_pos])).toEqual([
      ['えーっと、', 0, 5],
      ['あの', 5, 7],
    ]);
    expect(filler[0]!.fixed_sentence).toBe('、何時に待ち合わせですっけ。');
    const sentiment = parseNlpResponse(
      '/nlp/v1/sentiment',
      NLP_ENDPOINTS.sentiment.result,
      200,
      byPath('sentiment').responseBody,
    );
    expect(sentiment.sentiment).toBe('Positive');
    const keywords = parseNlpResponse(
      '/nlp/v1/keyword',
      NLP_ENDPOINTS.keyword.result,
      200,
      byPath('keyword').responseBody,
    );
    expect(keywords[0]).toEqual({ form: '太郎', score: 15.86012 });
    const summary = parseNlpResponse(
      '/nlp/v1/summary',
      NLP_ENDPOINTS.summary.result,
      200,
      byPath('summary').responseBody,
    );
    expect(summary).toMatch(/^東京は/);
  });

  it('a response that does not match names the field', () => {
    let err: unknown;
    try {
      parseNlpResponse('/nlp/v1/sentiment', NLP_ENDPOINTS.sentiment.result, 200, {
        status: 0,
        message: 'OK',
        result: { sentiment: 'Positive', score: 'high', emotional_phrase: [] },
      });
    } catch (e) {
      err = e;
    }
    expect((err as ServiceError).kind).toBe('invalid');
    expect((err as ServiceError).detail).toContain('result.score');
  });
});
