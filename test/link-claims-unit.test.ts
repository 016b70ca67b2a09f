import t from 'tap'; t.pass('placeholder');
