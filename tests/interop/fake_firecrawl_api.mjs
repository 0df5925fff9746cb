// A fake Firecrawl API on loopback, for running the real firecrawl-mcp 3.26.0 against in
// contract-audit's tests (tests/tests/client/audit_real.rs). It answers the endpoints the read-only
// tools call through the firecrawl SDK 4.42.0, with bodies shaped like the real API's:
//
//   POST /v2/scrape                        (firecrawl_scrape)   {success, data: <document>}
//   GET  /v2/team/credit-usage             (firecrawl_credit_usage, view current)
//   GET  /v2/team/credit-usage/historical  (firecrawl_credit_usage, view historical)
//
// Some bodies carry top-level keys the tool's output schema does not name: the scraped
// document's `creditsUsed` and `cacheState` (firecrawl_scrape's schema names `markdown`,
// `metadata`, … but not these), and the historical view's `teamId` and `periodCount`.
// firecrawl-mcp returns the body as structuredContent and as indented JSON text; fastmcp's
// zod parse strips the undeclared keys from structuredContent only. The current view is the
// clean control: firecrawl-mcp picks its four declared fields itself.
//
// The API key `fc-wrong-types` gets a current view whose `remainingCredits` is a string,
// which the tool's schema (a number) refuses.
//
//   node fake_firecrawl_api.mjs     prints `listening on http://127.0.0.1:PORT` once bound;
//                                   logs one line per request on stderr
import { createServer } from 'node:http';

const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const path = req.url.split('?')[0];
    console.error(`fake-firecrawl: ${req.method} ${req.url}`);
    if (req.method === 'POST' && path === '/v2/scrape') {
      const { url } = JSON.parse(body || '{}');
      return json(res, 200, {
        success: true,
        data: {
          markdown: '# Example Domain\n\nThis domain is for use in illustrative examples in documents.',
          metadata: {
            title: 'Example Domain',
            language: 'en',
            sourceURL: url,
            url,
            statusCode: 200,
            contentType: 'text/html',
            scrapeId: '019a1f3e-0000-7000-8000-000000000001',
          },
          creditsUsed: 1,
          cacheState: 'miss',
        },
      });
    }
    if (req.method === 'GET' && path === '/v2/team/credit-usage') {
      return json(res, 200, {
        success: true,
        data: {
          remainingCredits: key === 'fc-wrong-types' ? 'lots' : 4200,
          planCredits: 5000,
          billingPeriodStart: '2026-12-01T00:00:00Z',
          billingPeriodEnd: '2026-12-31T23:59:59Z',
          extraCredits: 0,
        },
      });
    }
    if (req.method === 'GET' && path === '/v2/team/credit-usage/historical') {
      return json(res, 200, {
        success: true,
        periods: [
          { startDate: '2026-11-01T00:00:00Z', endDate: '2026-11-30T23:59:59Z', creditsUsed: 812 },
          { startDate: '2026-12-01T00:00:00Z', endDate: null, creditsUsed: 800 },
        ],
        teamId: 'team_fake',
        periodCount: 2,
      });
    }
    return json(res, 404, { success: false, error: `no route ${req.method} ${path}` });
  });
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
