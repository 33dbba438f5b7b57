import type { FactInput } from '@kioku/core/store';

/** Facts on different topics, for relevance tests. Keys name the fact a query should find. */
export const FACT_FIXTURE = {
  timezone: {
    content: 'User is in Chicago (America/Chicago, UTC-6)',
    category: 'user-preferences/timezone',
    tags: ['location'],
  },
  language: {
    content: 'User prefers TypeScript over Python for new programming projects',
    category: 'user-preferences/coding',
    tags: ['coding'],
  },
  pet: {
    content: 'User has a dog, a golden retriever named Miso, and walks the pet every morning',
    category: 'personal/family',
    tags: ['pets'],
  },
  diet: {
    content: 'User is vegetarian and allergic to peanuts; avoid suggesting meat or peanut dishes',
    category: 'personal/health',
    tags: ['food'],
  },
  employer: {
    content: 'User works as a data engineer at Acme Logistics on the freight pricing team',
    category: 'work/job',
    tags: ['work'],
  },
  editor: {
    content: 'User edits code in Neovim with the Catppuccin color scheme',
    category: 'user-preferences/tools',
    tags: ['coding'],
  },
  birthday: {
    content: 'User’s birthday is on March 14',
    category: 'personal/dates',
    tags: [],
  },
  project: {
    content: 'Current project: migrating the billing service from MySQL to PostgreSQL by June',
    category: 'work/projects',
    tags: ['work', 'database'],
  },
  meetings: {
    content: 'User does not want meetings scheduled before 10am or on Fridays',
    category: 'user-preferences/schedule',
    tags: ['calendar'],
  },
  style: {
    content: 'Keep answers short: bullet points, no long introductions',
    category: 'user-preferences/communication',
    tags: [],
  },
  travel: {
    content: 'User is flying to Lisbon, Portugal for a conference in October',
    category: 'personal/travel',
    tags: ['travel'],
  },
  car: {
    content: 'User drives a 2019 Subaru Outback and is thinking about buying an electric car',
    category: 'personal/vehicles',
    tags: [],
  },
  music: {
    content: 'User listens to jazz, especially Bill Evans, while working',
    category: 'personal/hobbies',
    tags: ['music'],
  },
  antipattern: {
    content: 'Never run database migrations on the production cluster without a backup first',
    category: 'anti-patterns/database',
    tags: ['database', 'ops'],
  },
  kids: {
    content: 'User has two children, Aiko (8) and Ren (5), who go to school nearby',
    category: 'personal/family',
    tags: [],
  },
} satisfies Record<string, FactInput>;

export type FactFixtureKey = keyof typeof FACT_FIXTURE;

/** Natural-language questions and the fact each should rank in its top 3. */
export const FACT_QUERIES: ReadonlyArray<{ query: string; expect: FactFixtureKey }> = [
  { query: 'what timezone is the user in', expect: 'timezone' },
  { query: 'which programming language does the user prefer', expect: 'language' },
  { query: 'does the user have any pets', expect: 'pet' },
  { query: 'food allergies', expect: 'diet' },
  { query: 'where does the user work', expect: 'employer' },
  { query: 'when can I schedule a meeting', expect: 'meetings' },
  { query: 'postgres migration project deadline', expect: 'project' },
];

/** Knowledge documents: a query about each should return a chunk of the right one. */
export const DOCUMENT_FIXTURE = [
  {
    title: 'Refund policy',
    text: [
      'Customers may request a refund within 30 days of purchase.',
      'Refunds are paid to the original payment method within 5 business days.',
      'Digital downloads are not refundable once the download has started.',
    ].join('\n\n'),
    tags: ['policy'],
  },
  {
    title: 'Shipping',
    text: [
      'Orders ship from our warehouse in Rotterdam.',
      'Standard shipping to Europe takes 3 to 5 days; express delivery arrives the next day.',
      'We do not ship lithium batteries by air freight.',
    ].join('\n\n'),
    tags: ['logistics'],
  },
  {
    title: 'Office hours',
    text: 'Support is open Monday to Friday, 9:00 to 17:00 Central European Time, except public holidays.',
    tags: ['support'],
  },
] as const;

/** A longer document (several chunks at typical chunk sizes) with one paragraph per topic. */
export const HANDBOOK = {
  title: 'Employee handbook',
  paragraphs: [
    'Welcome to Northwind. This handbook explains how we work, what we expect from each other and where to find help when something is unclear.',
    'Working hours are flexible. Core hours are from 10:00 to 15:00, when everyone should be reachable for meetings and questions from colleagues.',
    'Remote work is allowed up to three days a week. Tell your team lead which days you plan to work from home, and keep your calendar up to date.',
    'Expenses must be submitted within 60 days through the finance portal. Attach a receipt for every item above 25 euros, including taxi rides and hotel stays.',
    'Parental leave is 16 weeks at full pay for every parent, and it can be split into two blocks during the first year after the birth or adoption.',
    'Vacation: every employee has 28 paid vacation days per year. Unused days may be carried over to the next year, up to a maximum of five days.',
    'Sick leave: report sickness to your manager before 9:00 on the first day. From the third day of illness we need a note from a doctor.',
    'Laptops are replaced every four years. Report a broken or stolen laptop to the IT service desk immediately so that the disk can be locked remotely.',
    'Passwords must be at least 14 characters long, and multi-factor authentication is mandatory for email, source code hosting and the finance portal.',
    'Training budget: each employee may spend 1,500 euros per year on courses, books and conferences that help them grow in their role.',
    'Performance reviews happen twice a year, in March and September. Reviews cover goals, feedback from peers and plans for the next half year.',
    'The office kitchen is cleaned every evening. Please label food in the shared fridge with your name and the date; unlabelled food is thrown away on Fridays.',
    'Bicycles can be parked in the basement garage. Electric scooters must not be charged inside the building because of the fire safety rules.',
    'Whistleblowing: concerns about fraud or misconduct can be reported anonymously to the ethics committee through the confidential hotline.',
  ],
} as const;

export const HANDBOOK_TEXT = HANDBOOK.paragraphs.join('\n\n');
