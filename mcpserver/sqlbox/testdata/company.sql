-- Small stand-in for fixtures/db/company.sql, for unit tests.
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, budget REAL, location TEXT);
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, department_id INTEGER REFERENCES departments(id),
  title TEXT, salary REAL, hire_date TEXT, manager_id INTEGER REFERENCES employees(id));
CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT, department_id INTEGER, budget REAL, start_date TEXT, end_date TEXT, status TEXT);
CREATE TABLE assignments (employee_id INTEGER, project_id INTEGER, role TEXT, hours_per_week REAL);
INSERT INTO departments VALUES (1, 'Engineering', 1000000, 'Berlin'), (2, 'Sales', 500000, 'Paris');
INSERT INTO employees VALUES
  (1, 'Ada Park', 'ada@example.com', 1, 'CTO', 200000, '2015-03-01', NULL),
  (2, 'Ben Ortiz', 'ben@example.com', 1, 'Engineer', 120000, '2019-06-15', 1),
  (3, 'Cleo Ng', 'cleo@example.com', 2, 'Account Executive', 90000, '2021-01-10', NULL);
INSERT INTO projects VALUES (1, 'Atlas', 1, 250000, '2024-01-01', NULL, 'active');
INSERT INTO assignments VALUES (2, 1, 'developer', 30);
