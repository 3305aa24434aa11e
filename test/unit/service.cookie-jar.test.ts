import { describe, expect, it } from 'vitest';
import { CookieJar } from '../../service/cookie-jar.ts';

const url = 'http://127.0.0.1:8787/api/asr/v1/speech_recognition/ja-gen_tf-08';

describe('CookieJar', () => {
  it('rotates the token cookie and keeps the load-balancer cookie', () => {
    const jar = new CookieJar();
    jar.setFromResponse(url, ['token=t1; Path=/', 'LBSESSION=node-7; Path=/; HttpOnly']);
    expect(jar.headerFor(url)).toBe('token=t1; LBSESSION=node-7');
    jar.setFromResponse(url, ['token=t2; Path=/']);
    expect(jar.headerFor(url)).toBe('token=t2; LBSESSION=node-7');
    expect(jar.get('token')).toBe('t2');
  });

  it('keeps Secure cookies over plain HTTP only for loopback hosts', () => {
    const local = new CookieJar();
    local.setFromResponse(url, ['token=s; Secure; Path=/']);
    expect(local.headerFor(url)).toBe('token=s');
    const remote = new CookieJar();
    remote.setFromResponse('http://asr.example.com/x', ['token=s; Secure; Path=/']);
    expect(remote.headerFor('http://asr.example.com/x')).toBeUndefined();
    remote.setFromResponse('https://asr.example.com/x', ['token=s; Secure; Path=/']);
    expect(remote.headerFor('https://asr.example.com/x')).toBe('token=s');
    expect(remote.headerFor('http://asr.example.com/x')).toBeUndefined();
  });

  it('honours Path, Domain, Max-Age and Expires', () => {
    let now = 1_000_000;
    const jar = new CookieJar(() => now);
    const base = 'https://a.svc.example.com/api/asr/v1/speech_recognition/m';
    jar.setFromResponse(base, [
      'p=1; Path=/api/asr',
      'q=2; Path=/other',
      'd=3; Domain=.svc.example.com; Path=/',
      'x=4; Domain=evil.com; Path=/',
      'm=5; Max-Age=10; Path=/',
      'e=6; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/',
    ]);
    expect(jar.headerFor(base)).toBe('p=1; d=3; m=5');
    expect(jar.headerFor('https://b.svc.example.com/')).toBe('d=3');
    expect(jar.headerFor('https://example.com/')).toBeUndefined();
    now += 11_000;
    expect(jar.headerFor(base)).toBe('p=1; d=3');
    jar.setFromResponse(base, ['p=gone; Path=/api/asr; Max-Age=0']);
    expect(jar.headerFor(base)).toBe('d=3');
  });

  it('serializes names only, never values', () => {
    const jar = new CookieJar();
    jar.setFromResponse(url, ['token=secret-value; Path=/']);
    expect(JSON.stringify(jar)).toBe('{"cookies":["token"]}');
  });

  it('ignores malformed headers', () => {
    const jar = new CookieJar();
    jar.setFromResponse(url, ['novalue', '=x', '']);
    expect(jar.headerFor(url)).toBeUndefined();
  });
});
